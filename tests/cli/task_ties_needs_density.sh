# --method ties without --density is a usage error naming what is missing; nothing is written.
"$WAVG" merge "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" --base "$SAMPLES/mlp/node3.h5" --method ties \
  -o out.h5 || { code=$?; test ! -e out.h5; exit $code; }
