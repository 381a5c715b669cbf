# --last N on a directory with fewer than N numbered checkpoints is a usage error; nothing is written.
mkdir run
cp "$SAMPLES/mlp/node1.h5" run/round-0001.h5
cp "$SAMPLES/mlp/node2.h5" run/round-0002.h5
"$WAVG" merge --last 3 run -o out.h5 || { code=$?; test ! -e out.h5; exit $code; }
