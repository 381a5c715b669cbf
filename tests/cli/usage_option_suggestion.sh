# A mistyped option gets the closest option of that subcommand, and its help.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o out.h5 --frce
