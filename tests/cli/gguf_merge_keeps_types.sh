# A merge of two GGUF fine-tunes keeps input 1's metadata (architecture, tokenizer, chat template) and each
# tensor's type (Q8_0 matrices, F32 norms), with the provenance added as wavg_* strings.
G=$SAMPLES/gguf
"$WAVG" merge -q $G/a.gguf $G/b.gguf -o m.gguf
"$WAVG" inspect m.gguf | grep -v '^  wavg_'
"$WAVG" inspect m.gguf | grep -o '^  wavg_[a-z_]*' | tr -d ' '
