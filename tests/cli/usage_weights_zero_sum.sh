# Weights that sum to zero are a usage error.
cd "$SAMPLES/mlp"
"$WAVG" merge node1.h5 node2.h5 -w 0,0 -o "$OLDPWD/out.h5"
