# --stats counts MPI traffic, so local-sgd refuses it without --backend mpi (usage error, exit 2) and writes nothing.
code=0
"$WAVG" local-sgd --data "$SAMPLES/digits/digits.csv.gz" --out-dir run --stats stats.json || code=$?
[ ! -e run ] && [ ! -e stats.json ]
exit $code
