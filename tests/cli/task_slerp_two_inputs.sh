# --method slerp interpolates between exactly two models: three inputs are a usage error; nothing is written.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" "$SAMPLES/mlp/node3.h5" --method slerp --t 0.5 \
  -o out.h5 || { code=$?; test ! -e out.h5; exit $code; }
