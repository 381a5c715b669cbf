# --staleness counts rounds behind the global model, so without --base it is a usage error (exit 2).
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" --staleness round -o next.h5
