# inspect shows an ONNX model's layout (IR version, producer, external data), its metadata_props and each tensor's
# role from the graph: float initializers and the Constant node's value weights, the int64 Reshape target and the
# float Resize scales graph constants.
"$WAVG" inspect "$SAMPLES"/onnx/a.onnx | sed "s|$SAMPLES|SAMPLES|"
"$WAVG" inspect "$SAMPLES"/onnx/ext/model.onnx | head -1 | sed "s|$SAMPLES|SAMPLES|"
