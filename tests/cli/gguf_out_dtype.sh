# --out-dtype picks a GGUF output's type: q4_0 quantizes every matrix (vectors stay F32, as llama.cpp's quantizer
# keeps norms); float16 stores every float tensor as F16; a block type for another format's output is a usage
# error (exit 2) before anything is read.
G=$SAMPLES/gguf
"$WAVG" merge -q $G/a.gguf $G/b.gguf -o q4.gguf --out-dtype q4_0
"$WAVG" inspect q4.gguf | head -n 1
"$WAVG" convert -q $G/a.gguf -o f16.gguf --out-dtype float16
"$WAVG" inspect f16.gguf | head -n 1
code=0
"$WAVG" merge -q $G/a.gguf $G/b.gguf -o m.safetensors --out-dtype q8_0 || code=$?
echo "exit $code; $(ls | wc -l) files"
