# mergekit resolves a recipe's parameters tensor by tensor: a model's own setting, then the global one, else the
# parameter's default, and a required parameter (weight; slerp's t) that no filter gives a tensor is an error. The
# switches wavg applies to the whole merge (normalize, rescale, ...) are refused when filtered. Expected values by
# hand: base 0, a = 1, b = 3 everywhere; task arithmetic (no normalize) is w_a a + w_b b.
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PYTHON'
import numpy as np
from hf_tools import write_safetensors
for name, v in (("base", 0.0), ("a", 1.0), ("b", 3.0)):
    write_safetensors(f"{name}.safetensors",
                      {"model.layers.0.attn.w": np.full(2, v), "model.layers.0.mlp.w": np.full(2, v)})
PYTHON
recipe() {  # recipe FILE WEIGHT_OF_A [GLOBAL_PARAMETERS]
  printf 'merge_method: %s\nbase_model: base.safetensors\nparameters: %s\nmodels:\n' "${4:-task_arithmetic}" \
    "${3:-{\}}" > "$1"
  printf '  - model: a.safetensors\n    parameters: {weight: %s}\n' "$2" >> "$1"
  printf '  - model: b.safetensors\n    parameters: {weight: 0.5}\n' >> "$1"
}
# a's weight 0.5 on mlp, the global weight 1 elsewhere: attn 1 + 1.5 = 2.5, mlp 0.5 + 1.5 = 2.
recipe ok.yml '[{filter: mlp, value: 0.5}]' '{weight: 1}'
"$WAVG" merge -q --recipe ok.yml -o ok.safetensors
/usr/bin/python3 -c '
from hf_tools import read_safetensors
t, _ = read_safetensors("ok.safetensors")
assert list(t["model.layers.0.attn.w"]) == [2.5, 2.5] and list(t["model.layers.0.mlp.w"]) == [2.0, 2.0], t
print("filtered weight with a global default: ok")'
# No global weight: a's attn tensor has none (mergekit: "Missing required parameter weight").
recipe missing.yml '[{filter: mlp, value: 0.5}]'
"$WAVG" merge --recipe missing.yml -o missing.safetensors || echo "exit $?"
# slerp with t given only for mlp.
printf 'merge_method: slerp\nbase_model: a.safetensors\nparameters: {t: [{filter: mlp, value: 0.8}]}\n' > t.yml
printf 'models:\n  - model: a.safetensors\n  - model: b.safetensors\n' >> t.yml
"$WAVG" merge --recipe t.yml -o t.safetensors || echo "exit $?"
# normalize only for mlp: wavg would normalise every tensor.
recipe norm.yml 1 '{normalize: [{filter: mlp, value: true}, {value: false}]}'
"$WAVG" merge --recipe norm.yml -o norm.safetensors || echo "exit $?"
test ! -e missing.safetensors && test ! -e t.safetensors && test ! -e norm.safetensors
