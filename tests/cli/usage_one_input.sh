# merge needs two inputs or more.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" -o out.h5
