# --format lists its values in --help, and an output whose extension says nothing is refused with the same list
# (exit 2, nothing written).
"$WAVG" merge --help | grep -o -- '--format [a-z0-9|-]*'
"$WAVG" convert --help | grep -o -- '--format [a-z0-9|-]*'
code=0
"$WAVG" convert "$SAMPLES/mlp/node1.h5" -o x.out || code=$?
echo "exit $code; $(ls | wc -l) files left"
code=0
"$WAVG" convert "$SAMPLES/mlp/node1.h5" --format gguf -o x.out || code=$?
echo "exit $code"
