# A GGUF output keeps input 1's types where wavg writes them; a K-quant (or Q4_1, Q5_0, Q5_1) input 1 without
# --out-dtype is refused with the types it holds and what to give instead, and nothing is left behind; with
# --out-dtype q8_0 the same merge is written.
G=$SAMPLES/gguf
cp $G/types.gguf t2.gguf
code=0
"$WAVG" merge -q $G/types.gguf t2.gguf -o x.gguf || code=$?
echo "exit $code; $(ls | wc -l) files"
"$WAVG" merge -q $G/types.gguf t2.gguf -o x.gguf --out-dtype q8_0
"$WAVG" inspect x.gguf | head -n 1
