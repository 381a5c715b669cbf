# Optional: mergekit's own command line (mergekit-yaml) and wavg merge --recipe give the same tensors for sce,
# nearswap, arcee_fusion, model_stock filter_wise, slerp extrapolating, sliced merges, int8_mask and the tokenizer
# merges (mergekit_yaml.py says what is compared and how closely). Needs a Python with mergekit named by
# WAVG_MERGEKIT_PYTHON, with mergekit-yaml beside it (a venv outside the repository; mergekit_same_tensors.sh says
# how to make one); skipped without one.
PY=${WAVG_MERGEKIT_PYTHON:-}
export HF_HUB_OFFLINE=1  # the models are local folders; mergekit must not ask the hub about them
[ -n "$PY" ] && "$PY" -c 'import mergekit, transformers, torch' 2>/dev/null && [ -x "$(dirname "$PY")/mergekit-yaml" ] ||
  { echo "no WAVG_MERGEKIT_PYTHON with mergekit-yaml beside it"; exit 77; }
PYTHONPATH=$ROOT/tests/cli "$PY" "$ROOT/tests/cli/mergekit_yaml.py" "$WAVG" "$(dirname "$PY")/mergekit-yaml" 2> stderr.txt || { cat stderr.txt >&2; exit 1; }
