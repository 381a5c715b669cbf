# check takes merge's --recipe: the recipe's models are the inputs (2 here), and its weights are held to the rule
# merge holds them to (mergekit's linear divides by their sum, so 2 and -2 are refused, exit 2).
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PYTHON'
import numpy as np
from hf_tools import write_safetensors
for name, v in (("a", 1.0), ("b", 3.0)):
    write_safetensors(f"{name}.safetensors", {"w": np.full((2, 3), v, dtype=np.float32), "v": np.zeros(4, np.float32)})
PYTHON
recipe() {
  printf 'merge_method: linear\nmodels:\n  - model: a.safetensors\n    parameters: {weight: %s}\n' "$2" > "$1"
  printf '  - model: b.safetensors\n    parameters: {weight: %s}\n' "$3" >> "$1"
  "$WAVG" check --recipe "$1" || echo "exit $?"
}
recipe good.yml 1 3
recipe cancel.yml 2 -2
