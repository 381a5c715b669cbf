# DeepSpeed ZeRO checkpoints of one 2-rank run (samples/deepspeed, laid out as DeepSpeed's ZeRO optimizers
# partition and checked by its zero_to_fp32): two of ZeRO stage 2 (the group flattened, padded, split) and one of
# stage 3 (each parameter split on its own) merge; their mean equals the closed forms at k = 2 (numpy reads it).
D="$SAMPLES"/deepspeed/run
"$WAVG" merge -q "$D"/global_step1000 "$D"/global_step2000 "$D"/global_step3000 -o avg.safetensors
/usr/bin/python3 "$ROOT"/tests/dcp/check_means.py avg.safetensors 2 deepspeed
