# Optional, slow (DeepSpeed's engine starts in about a minute on two cores): DeepSpeed's engine, two ranks on the
# CPU (gloo), resumes from the DeepSpeed folder wavg wrote of each engine sample run (load_checkpoint(".",
# tag=...)): each rank's fp32 master partition and Adam moments are then what its optim file holds, and a training
# step runs (tests/deepspeed/engine_resume.py). Needs WAVG_DEEPSPEED_ENGINE_PYTHON with deepspeed.
PY=${WAVG_DEEPSPEED_ENGINE_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import deepspeed' >/dev/null 2>&1 ||
  { echo "no WAVG_DEEPSPEED_ENGINE_PYTHON with deepspeed"; exit 77; }
export TORCH_EXTENSIONS_DIR=$PWD/torch_extensions
for s in 2 3; do
  "$WAVG" merge -q --last 2 "$SAMPLES"/deepspeed/engine/zero$s -o zero$s/
  "$PY" "$ROOT"/tests/deepspeed/engine_resume.py "$SAMPLES"/deepspeed/make_engine.py $s . zero$s >log 2>&1 ||
    { tail -20 log >&2; exit 1; }
  tail -1 log
done
