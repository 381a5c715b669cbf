# model_stock with filter_wise: true gives each row (along the last dimension; a 1-D tensor is one row) its own t,
# as mergekit's model_stock.py does with dim=-1; checked against numpy (mergekit_ref.model_stock). One row of
# up_proj has the two fine-tunes' changes exactly opposite (mean cosine -1, the pole of t = N cos / (1 + (N-1) cos)
# for N = 2): that row keeps the base, -v names the tensor and the summary counts the row; one row of down_proj is
# unchanged by both (t = 0: the base). Without filter_wise, one t per tensor (the plain reference).
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, os
import numpy as np
from hf_tools import write_safetensors
rng = np.random.default_rng(5)
shapes = {"model.embed_tokens.weight": (6, 4), "model.layers.0.mlp.up_proj.weight": (5, 4),
          "model.layers.0.mlp.down_proj.weight": (4, 5), "model.layers.0.input_layernorm.weight": (4,)}
base = {k: rng.normal(size=s) for k, s in shapes.items()}
tv = [{k: rng.normal(scale=0.1, size=s) for k, s in shapes.items()} for _ in range(2)]
tv[1]["model.layers.0.mlp.up_proj.weight"][2] = -tv[0]["model.layers.0.mlp.up_proj.weight"][2]
for t in tv:
    t["model.layers.0.mlp.down_proj.weight"][1] = 0
for name, tensors in (("base", base), ("ft0", {k: base[k] + tv[0][k] for k in shapes}),
                      ("ft1", {k: base[k] + tv[1][k] for k in shapes})):
    os.makedirs(name)
    write_safetensors(f"{name}/model.safetensors", tensors, {"format": "pt"})
    json.dump({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 1}, open(f"{name}/config.json", "w"))
PY
printf 'models:\n  - model: ft0\n  - model: ft1\nbase_model: base\nmerge_method: model_stock\n' > plain.yml
{ cat plain.yml; printf 'parameters:\n  filter_wise: true\n'; } > rows.yml
"$WAVG" merge -v --recipe rows.yml -o rows/ 2>&1 >/dev/null | grep -E '^wavg: model stock|kept the base'
"$WAVG" merge -q --recipe plain.yml -o plain/
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
from mergekit_ref import model_stock
load = lambda m: read_safetensors(f"{m}/model.safetensors")[0]
base, xs = load("base"), [load("ft0"), load("ft1")]
for out, filter_wise in (("rows", True), ("plain", False)):
    got = load(out)
    for k in base:
        want = model_stock([x[k] for x in xs], base[k], filter_wise=filter_wise)
        assert np.allclose(got[k], want, rtol=1e-12, atol=1e-15), (out, k, got[k] - want)
    print(out, "ok")
rows = load("rows")
assert np.array_equal(rows["model.layers.0.mlp.up_proj.weight"][2], base["model.layers.0.mlp.up_proj.weight"][2])
assert not np.allclose(rows["model.layers.0.mlp.up_proj.weight"], load("plain")["model.layers.0.mlp.up_proj.weight"])
print("the row at the pole is the base's; filter_wise changes the result")
PY
