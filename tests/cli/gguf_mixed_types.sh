# Inputs storing a tensor as different GGUF types (Q8_0 beside Q4_0) are averaged from their decoded values and
# written in input 1's type, as float dtypes that differ are; -v says which input stores which.
G=$SAMPLES/gguf
"$WAVG" convert -q $G/b.gguf -o b4.gguf --out-dtype q4_0
"$WAVG" merge -v $G/a.gguf b4.gguf -o m.gguf 2>&1 | grep 'stored as' | sed "s|$G/||"
"$WAVG" inspect m.gguf | head -n 1
