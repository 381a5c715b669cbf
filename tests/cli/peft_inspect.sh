# inspect lists an adapter's tensors with their roles (LoRA factors, the saved head module) and each adapted module
# with its rank and scale: q_proj r 2 and lora_alpha 4 (scale 2); v_proj rank 1 and alpha 2 from rank_pattern and
# alpha_pattern (scale 2); rsLoRA's scale is lora_alpha / sqrt(r) = 8 / 2 = 4.
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/rslora" .
"$WAVG" inspect client1
"$WAVG" inspect rslora | grep -A2 "^LoRA modules"
