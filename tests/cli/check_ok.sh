# check of matching inputs prints one line and exits 0.
cd "$SAMPLES/mlp"
"$WAVG" check node1.h5 node2.h5 node3.h5
