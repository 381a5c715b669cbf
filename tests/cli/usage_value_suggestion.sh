# A mistyped value of a choice option gets the closest name, and the help of the subcommand to see.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o out.h5 --method medain
