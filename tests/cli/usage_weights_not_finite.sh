# A NaN or infinite weight is a usage error.
cd "$SAMPLES/mlp"
"$WAVG" merge node1.h5 node2.h5 -w 1,inf -o "$OLDPWD/out.h5"
