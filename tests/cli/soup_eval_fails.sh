# An evaluation whose last line is not a number is a one-line error naming the checkpoint; exit 1, no output.
cp "$SAMPLES/mlp/node1.h5" a.h5
cp "$SAMPLES/mlp/node2.h5" b.h5
"$WAVG" soup a.h5 b.h5 --eval 'echo not-a-score {model}' -o soup.h5 || { code=$?; test ! -e soup.h5; exit $code; }
