# --force replaces an existing output; no temporary file is left beside it.
echo old > out.h5
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o out.h5 --force -q
ls -A
