# A missing input is a runtime error naming the file; no output appears.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" nope.h5 -o out.h5 || { code=$?; ls -A; exit $code; }
