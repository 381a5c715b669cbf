# --format lists its values in --help, and an output whose extension says nothing is refused with the same list
# (exit 2, nothing written).
# (--help breaks a long list after a '|' onto indented lines: joined here.)
"$WAVG" merge --help | sed -z 's/|\n */|/g' | grep -o -- '--format [a-z0-9|-]*'
"$WAVG" convert --help | sed -z 's/|\n */|/g' | grep -o -- '--format [a-z0-9|-]*'
code=0
"$WAVG" convert "$SAMPLES/mlp/node1.h5" -o x.out || code=$?
echo "exit $code; $(ls | wc -l) files left"
code=0
"$WAVG" convert "$SAMPLES/mlp/node1.h5" --format tflite -o x.out || code=$?
echo "exit $code"
