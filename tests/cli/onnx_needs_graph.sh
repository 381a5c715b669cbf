# An ONNX output is input 1's graph with merged values, so what would not fit that graph is refused before anything
# is written: --out-dtype changing an initializer's type, and an output from a format with no graph.
S=$SAMPLES/onnx
set +e
"$WAVG" merge "$S"/a.onnx "$S"/b.onnx -o o.onnx --out-dtype f16
echo "exit $?"
"$WAVG" convert -q "$S"/a.onnx -o a.safetensors
"$WAVG" convert a.safetensors -o back.onnx
echo "exit $?"
ls
