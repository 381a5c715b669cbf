# A GGUF file cut short, or whose counts or offsets point past its end, is an error naming what is wrong (exit 1).
G=$SAMPLES/gguf
head -c 3000 $G/a.gguf > cut.gguf
code=0
"$WAVG" inspect cut.gguf || code=$?
echo "exit $code"
