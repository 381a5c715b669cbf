# After --out-dtype, general.file_type says the type the output's matrices are stored as, with llama.cpp's
# llama_ftype values (llama.h: ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q4_0 2, MOSTLY_Q8_0 7, MOSTLY_BF16 32); float64,
# which llama.cpp has no value for, drops the key; without --out-dtype input 1's value (7, Q8_0) stays with its
# types.
G=$SAMPLES/gguf
"$WAVG" merge -q $G/a.gguf $G/b.gguf -o kept.gguf
for t in float32 float16 bfloat16 q8_0 q4_0 float64; do
  "$WAVG" merge -q $G/a.gguf $G/b.gguf -o $t.gguf --out-dtype $t
done
for t in kept float32 float16 bfloat16 q8_0 q4_0 float64; do
  echo "$t: $("$WAVG" inspect $t.gguf | sed -n '2,3p' | tr '\n' ' ')"
done
