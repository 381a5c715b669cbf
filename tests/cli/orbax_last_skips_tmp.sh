# --last over a run folder skips the folders orbax-checkpoint saves into before renaming them to their step
# (STEP.orbax-checkpoint-tmp, and STEP.orbax-checkpoint-tmp-TIMESTAMP as older releases named them, whose trailing
# digits would otherwise make it the newest step), saying so with -v: the two newest finished steps (200: train_2,
# 300: train_3 of tests/orbax) average to 0.625 + L/8 + i/16 in float leaf L.
O=$ROOT/tests/orbax
for k in 1 2 3; do
  mkdir -p run/${k}00 && cp -r "$O"/train_$k run/${k}00/default && cp "$O"/train_$k/_CHECKPOINT_METADATA run/${k}00/
done
mkdir -p run/400.orbax-checkpoint-tmp-1765100000000/default run/500.orbax-checkpoint-tmp/default
"$WAVG" merge -v --last 2 run -o avg/ 2>err
grep -e '--last: skipping' err | sort
"$WAVG" convert -q avg -o avg.safetensors
/usr/bin/python3 "$O/last_two_mean.py" avg avg.safetensors
