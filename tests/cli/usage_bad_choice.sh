# An unknown --int-policy value names the choices.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" --int-policy maybe -o out.h5
