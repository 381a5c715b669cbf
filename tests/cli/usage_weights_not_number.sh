# A weight that is not a number is a usage error naming it.
cd "$SAMPLES/mlp"
"$WAVG" merge node1.h5 node2.h5 -w 1,two -o "$OLDPWD/out.h5"
