# A negative weight is a usage error.
cd "$SAMPLES/mlp"
"$WAVG" merge node1.h5 node2.h5 node3.h5 -w 1,-1,2 -o "$OLDPWD/out.h5"
