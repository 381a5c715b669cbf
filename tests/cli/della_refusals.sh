# della's keep probabilities run from density - epsilon to density + epsilon, so mergekit refuses (and wavg with it)
# a density below 1 whose band leaves (0, 1), for the scalar options and for each tensor of a recipe (the density
# gradient below reaches 0.95 in layer 1, with epsilon 0.1). epsilon is della's alone; --rescale inverse-density
# (one factor per tensor) has no meaning where the probability differs per entry. Nothing is written.
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PYTHON'
import numpy as np
from hf_tools import write_safetensors
for name, v in (("base", 0.0), ("a", 1.0), ("b", 3.0)):
    write_safetensors(f"{name}.safetensors", {"model.layers.0.mlp.w": np.full((2, 3), v),
                                              "model.layers.1.mlp.w": np.full((2, 3), v)})
PYTHON
m() { "$WAVG" merge a.safetensors b.safetensors --base base.safetensors -o out.safetensors "$@" || echo "exit $?"; }
m --method della --density 0.9
m --method della-linear --density 0.5 --epsilon 1.2
m --method della --density 0.3 --epsilon 0.3
m --method della --density 0.5 --rescale inverse-density
m --method ties --density 0.5 --epsilon 0.1
m --method della --epsilon 0.1
printf 'merge_method: della\nbase_model: base.safetensors\nparameters: {epsilon: 0.1}\nmodels:\n' > grad.yml
printf '  - model: a.safetensors\n    parameters: {weight: 1, density: [0.5, 0.95]}\n' >> grad.yml
printf '  - model: b.safetensors\n    parameters: {weight: 1, density: 0.5}\n' >> grad.yml
"$WAVG" merge --recipe grad.yml -o out.safetensors || echo "exit $?"
test ! -e out.safetensors
