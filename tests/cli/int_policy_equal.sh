# --int-policy equal refuses integer tensors that differ (the Adam iteration counters 100, 200); exit 3.
cd "$SAMPLES/mlp"
"$WAVG" merge node1.h5 node2.h5 --int-policy equal -o "$OLDPWD/out.h5"
