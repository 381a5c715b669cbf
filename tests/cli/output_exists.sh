# An existing output is refused without --force (exit 2) and left as it was.
echo precious > out.h5
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o out.h5 || { code=$?; cat out.h5; exit $code; }
