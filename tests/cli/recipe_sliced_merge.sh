# Slices that merge several sources (mergekit's slices: with any method), on float64 Llama-shaped folders made here:
# each output slice merges its sources' layer ranges paired by position, the settings resolved per slice as
# mergekit's ConfigReader does (a source's own, then the slice's, then the recipe's), gradients running over the
# slice's own layers (t = idx / (n - 1), 1 for a one-layer slice), the embeddings from the first slice's sources and
# the final norm and head from the last one's at t = 0. Every tensor is compared with numpy's formulas
# (mergekit_ref.py, written from mergekit's source); config.json has the new layer count and the dtype written.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, os
import numpy as np
from hf_tools import llama_shapes, write_safetensors
rng = np.random.default_rng(5)
base = {k: rng.normal(size=s) for k, s in llama_shapes(6, 4, 6, 10).items()}
for name in ("base", "a", "b"):
    os.makedirs(f"models/{name}")
    t = base if name == "base" else {k: v + rng.normal(scale=0.3, size=v.shape) for k, v in base.items()}
    write_safetensors(f"models/{name}/model.safetensors", t, {"format": "pt"})
    json.dump({"num_hidden_layers": 6, "torch_dtype": "float32", "name": name}, open(f"models/{name}/config.json", "w"))
PY
cat > ta.yml <<'YML'
slices:
  - sources:
      - model: models/a
        layer_range: [0, 3]
        parameters:
          weight: [1, 0.5]
      - model: models/b
        layer_range: [2, 5]
      - model: models/base
        layer_range: [0, 3]
    parameters:
      weight:
        - filter: mlp
          value: [0.2, 0.8]
        - value: 0.5
  - sources:
      - model: models/b
        layer_range: [5, 6]
        parameters:
          weight: 2
      - model: models/a
        layer_range: [3, 4]
      - model: models/base
        layer_range: [4, 5]
    parameters:
      lambda: [0.5, 1.5]
merge_method: task_arithmetic
base_model: models/base
parameters:
  weight: 0.25
  lambda: 1
dtype: float64
YML
cat > slerp.yml <<'YML'
slices:
  - sources:
      - model: models/base
        layer_range: [0, 4]
      - model: models/a
        layer_range: [0, 4]
    parameters:
      t:
        - filter: self_attn
          value: [0, 1]
  - sources:
      - model: models/base
        layer_range: [2, 6]
      - model: models/b
        layer_range: [2, 6]
merge_method: slerp
base_model: models/base
parameters:
  t:
    - filter: mlp
      value: [1, 0.5, 0.7, 0.3, 0]
    - value: 0.5
dtype: float64
YML
"$WAVG" merge -q --recipe ta.yml -o ta/
"$WAVG" merge -q --recipe slerp.yml -o slerp/
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, re
import numpy as np, yaml
from hf_tools import read_safetensors
from mergekit_ref import evaluate_setting, gta, slerp

models = {m: read_safetensors(f"models/{m.split('/')[-1]}/model.safetensors")[0] for m in
          ("models/base", "models/a", "models/b")}

def plan(recipe):
    """plan.py: (output name, slice, t, {source model: its tensor name}) for every output tensor."""
    slices = recipe["slices"]
    out, layer = [], 0
    names = list(models["models/base"])
    outside = [n for n in names if not re.search(r"\.layers\.\d+\.", n)]
    for n in outside:
        if "embed" in n:
            out.append((n, slices[0], 0.0, {s["model"]: n for s in slices[0]["sources"]}))
    for s in slices:
        first = {src["model"]: src["layer_range"][0] for src in s["sources"]}
        length = s["sources"][0]["layer_range"][1] - s["sources"][0]["layer_range"][0]
        for idx in range(length):
            t = idx / (length - 1) if length > 1 else 1.0
            for n in names:
                m = re.match(r"model\.layers\.0\.(.*)", n)
                if m:
                    out.append((f"model.layers.{layer}.{m.group(1)}", s, t,
                                {src: f"model.layers.{f + idx}.{m.group(1)}" for src, f in first.items()}))
            layer += 1
    for n in outside:
        if "embed" not in n:
            out.append((n, slices[-1], 0.0, {s["model"]: n for s in slices[-1]["sources"]}))
    return out, layer

def parameter(recipe, sl, name, tensor, t, model=None):
    """ConfigReader.parameter: the source's own setting, the slice's, the recipe's."""
    levels = []
    if model:
        levels += [s.get("parameters", {}) for s in sl["sources"] if s["model"] == model]
    levels += [sl.get("parameters", {}), recipe.get("parameters", {})]
    for level in levels:
        if name in level:
            v = evaluate_setting(level[name], tensor, t)
            if v is not None:
                return v
    return None

def check(name, want_layers):
    recipe = yaml.safe_load(open(f"{name}.yml"))
    got = read_safetensors(f"{name}/model.safetensors")[0]
    tensors, layers = plan(recipe)
    assert layers == want_layers and sorted(got) == sorted(n for n, *_ in tensors), name
    worst = 0
    for out, sl, t, src in tensors:
        base = recipe["base_model"]
        others = [s["model"] for s in sl["sources"] if s["model"] != base]
        if recipe["merge_method"] == "slerp":
            want = slerp(parameter(recipe, sl, "t", out, t), models[base][src[base]], models[others[0]][src[others[0]]])
        else:
            w = [parameter(recipe, sl, "weight", src[m], t, m) for m in others]
            lam = parameter(recipe, sl, "lambda", out, t)
            want = gta(models[base][src[base]], [models[m][src[m]] for m in others], w, lam, lambda x, i: x, False,
                       False)
        worst = max(worst, np.max(np.abs(got[out] - want) / np.maximum(np.abs(want), 1)))
    assert worst <= 1e-14, (name, worst)
    config = json.load(open(f"{name}/config.json"))
    assert config == {"num_hidden_layers": want_layers, "torch_dtype": "float64", "name": "base"}, config
    print(name, "ok")

check("ta", 4)
check("slerp", 8)
PY
