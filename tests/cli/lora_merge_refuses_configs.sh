# Adapters whose configs disagree are refused before anything is written, every difference named beside input 1's
# (exit 3): other target modules, modules_to_save and adapted modules; factorwise refuses different ranks (exact
# takes them); a DoRA adapter and a plain LoRA adapter are not merged (use_dora differs).
cp -r "$SAMPLES/lora/client1" "$SAMPLES/lora/rslora" "$SAMPLES/lora/rank4" "$SAMPLES/lora/dora" .
status=0
"$WAVG" merge client1 rslora -o a/ || status=$?
"$WAVG" merge client1 rank4 --lora factorwise -o b/ || status=$?
"$WAVG" merge rslora dora -o c/ || status=$?
ls
exit $status
