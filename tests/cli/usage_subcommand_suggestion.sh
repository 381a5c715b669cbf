# A mistyped subcommand gets the closest one.
"$WAVG" mereg "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o out.h5
