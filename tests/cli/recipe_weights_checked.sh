# A recipe's weights pass the check merge's --weights pass (one rule per method, in its row). mergekit's linear
# divides by the weights' sum: weights that sum to zero are refused (the output was all zeros, exit 0), and so
# are weights whose sum overflows (the output held infinities and NaNs, exit 0). task-arithmetic --normalize on
# the command line is held to the same rule. Nothing is written.
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PYTHON'
import numpy as np
from hf_tools import write_safetensors
for name, v in (("base", 0.0), ("a", 1.0), ("b", 3.0)):
    write_safetensors(f"{name}.safetensors", {"w": np.full((2, 3), v, dtype=np.float32)})
PYTHON
recipe() {
  printf 'merge_method: linear\nmodels:\n  - model: a.safetensors\n    parameters: {weight: %s}\n' "$2" > "$1"
  printf '  - model: b.safetensors\n    parameters: {weight: %s}\n' "$3" >> "$1"
  "$WAVG" merge --recipe "$1" -o out.safetensors || echo "exit $?"
}
recipe zero.yml 0 0
recipe cancel.yml 2 -2
recipe huge.yml 1e308 1e308
"$WAVG" merge a.safetensors b.safetensors --base base.safetensors --method task-arithmetic --normalize -w 1,-1 \
  -o out.safetensors || echo "exit $?"
test ! -e out.safetensors
