# inspect shows a GGUF file's keys (strings as themselves, other values with their type, long arrays by their
# first elements), the types its tensors are stored as, and each quantized tensor read as float32 (samples/gguf/,
# written by the gguf package's GGUFWriter).
cd "$SAMPLES/gguf"
"$WAVG" inspect a.gguf
