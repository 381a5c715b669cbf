# A run folder of a CheckpointManager (numbered steps, each holding _CHECKPOINT_METADATA and its item in default/)
# merges with --last: the two newest steps (200: train_2, 300: train_3 of tests/orbax) average to
# 0.625 + L/8 + i/16 in float leaf L; optax's count is the newest step's (30), as --last keeps counters.
O=$ROOT/tests/orbax
for k in 1 2 3; do
  mkdir -p run/${k}00 && cp -r "$O"/train_$k run/${k}00/default && cp "$O"/train_$k/_CHECKPOINT_METADATA run/${k}00/
done
"$WAVG" merge -q --last 2 run -o avg/
"$WAVG" convert -q avg -o avg.safetensors
/usr/bin/python3 "$O/last_two_mean.py" avg avg.safetensors
