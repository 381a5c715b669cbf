# --algorithm chooses how MPI ranks exchange weights, so local-sgd refuses it without --backend mpi (usage error,
# exit 2) and writes nothing.
code=0
"$WAVG" local-sgd --data "$SAMPLES/digits/digits.csv.gz" --out-dir run --algorithm gather || code=$?
[ ! -e run ]
exit $code
