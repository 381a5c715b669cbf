# --last over a run's folder of DCP checkpoints (step-N/ folders): the two newest, step-200 (one rank) and step-300
# (two ranks), under --schedule ema:0.5 weigh 0.5 each, so the result is the closed forms at k = 2.5.
"$WAVG" merge -q --last 2 "$SAMPLES"/dcp/run --schedule ema:0.5 -o avg.safetensors
/usr/bin/python3 "$ROOT"/tests/dcp/check_means.py avg.safetensors 2.5
