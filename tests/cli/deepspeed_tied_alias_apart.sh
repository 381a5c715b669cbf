# A DeepSpeed folder output keeps input 1's shared_params: where another input holds lm_head.weight apart from
# emb.weight (a .safetensors file), each needs its own mean, which the one fp32 master cannot hold: refused, nothing
# written (a .safetensors output holds them apart).
cp -r "$SAMPLES"/deepspeed/aligned/global_step1 in
"$WAVG" convert -q in -o apart.safetensors
"$WAVG" merge -q in apart.safetensors -o out.safetensors
"$WAVG" merge -q in apart.safetensors -o out/ || echo "exit $?"
test ! -e out
