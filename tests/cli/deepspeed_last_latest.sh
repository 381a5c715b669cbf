# A DeepSpeed run folder: given itself, its `latest` file names the checkpoint read (global_step3000, ZeRO 3);
# --last 2 takes its two newest global_stepN/ folders (the file `latest` has no number), weighed by ema:0.5.
D="$SAMPLES"/deepspeed/run
"$WAVG" inspect "$D" | head -1 | sed "s#$D#RUN#"
"$WAVG" merge -q --last 2 "$D" --schedule ema:0.5 -o avg.safetensors
/usr/bin/python3 "$ROOT"/tests/dcp/check_means.py avg.safetensors 2.5 deepspeed
