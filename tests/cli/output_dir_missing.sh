# An output in a directory that does not exist is a runtime error (exit 1); nothing is created.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o nodir/out.h5 || { code=$?; ls -A; exit $code; }
