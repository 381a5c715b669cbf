# multislerp divides its weights by their sum (mergekit's normalize_weights, on by default): weights that sum to
# zero, on the command line or in a recipe, are refused before anything is written, as the mean refuses them
# (the output was a model of NaNs, exit 0).
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PYTHON'
import numpy as np
from hf_tools import write_safetensors
for name, v in (("a", 1.0), ("b", 3.0)):
    write_safetensors(f"{name}.safetensors", {"w": np.full((2, 3), v, dtype=np.float32)})
PYTHON
m() { "$WAVG" merge a.safetensors b.safetensors --method multislerp -o out.safetensors "$@" || echo "exit $?"; }
m -w 0,0
m -w 1,-1
printf 'merge_method: multislerp\nmodels:\n  - model: a.safetensors\n    parameters: {weight: 1}\n' > r.yml
printf '  - model: b.safetensors\n    parameters: {weight: -1}\n' >> r.yml
"$WAVG" merge --recipe r.yml -o out.safetensors || echo "exit $?"
test ! -e out.safetensors
