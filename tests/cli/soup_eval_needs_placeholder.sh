# An --eval command without {model} is a usage error; nothing is evaluated or written.
"$WAVG" soup "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" --eval 'python3 eval.py' -o soup.h5 \
  || { code=$?; test ! -e soup.h5; exit $code; }
