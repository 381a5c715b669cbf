# A mistyped --format value or output extension gets a suggestion, as mistyped methods and options do.
code=0; "$WAVG" convert "$SAMPLES/mlp/node1.h5" --format safetensor -o x.bin || code=$?
echo "--format safetensor: exit $code"
code=0; "$WAVG" convert "$SAMPLES/mlp/node1.h5" -o x.safetensor || code=$?
echo "-o x.safetensor: exit $code"
