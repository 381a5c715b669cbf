#!/usr/bin/python3
"""Runs mergekit YAML recipes (wavg merge --recipe) on tiny Llama-shaped Hugging Face folders made here with numpy,
and checks every tensor against numpy implementations of mergekit's formulas (tests/cli/mergekit_ref.py) with the
recipe's per-model parameters, layer gradients and filters evaluated as mergekit's config.py does; agreement to
1e-12 relative (float64 models). Also: the YAML lands in the folder as mergekit_config.yml and in the provenance,
and config.json and the tokenizer come from the base model. Usage: recipe_methods.py WAVG (in an empty directory)."""
import json
import os
import re
import subprocess
import sys

import numpy as np

import mergekit_ref as ref
from hf_tools import read_safetensors, write_safetensors

WAVG = sys.argv[1]
rng = np.random.default_rng(28)
H, F, V, L = 8, 12, 16, 3  # hidden, intermediate, vocabulary, layers
SHAPES = {"model.embed_tokens.weight": (V, H)}
for i in range(L):
    p = f"model.layers.{i}."
    SHAPES.update({p + "input_layernorm.weight": (H,), p + "post_attention_layernorm.weight": (H,)})
    SHAPES.update({p + f"self_attn.{m}_proj.weight": (H, H) for m in "qkvo"})
    SHAPES.update({p + "mlp.gate_proj.weight": (F, H), p + "mlp.up_proj.weight": (F, H),
                   p + "mlp.down_proj.weight": (H, F)})
SHAPES.update({"model.norm.weight": (H,), "lm_head.weight": (V, H)})
T = ref.layer_t(list(SHAPES))


def model(folder, tensors, tag):
    os.makedirs(folder)
    write_safetensors(f"{folder}/model.safetensors", tensors, {"format": "pt"})
    json.dump({"architectures": ["LlamaForCausalLM"], "hidden_size": H, "num_hidden_layers": L, "tag": tag},
              open(f"{folder}/config.json", "w"))
    json.dump({"tag": tag}, open(f"{folder}/tokenizer.json", "w"))


base = {k: rng.normal(size=s) for k, s in SHAPES.items()}
shared = {k: rng.normal(scale=0.05, size=s) for k, s in SHAPES.items()}
tunes = [{k: base[k] + shared[k] + rng.normal(scale=0.1, size=s) for k, s in SHAPES.items()} for _ in range(3)]
model("base", base, "base")
for i, t in enumerate(tunes):
    model(f"ft{i}", t, f"ft{i}")


def run(name, yaml_text):
    open(f"{name}.yml", "w").write(yaml_text)
    subprocess.run([WAVG, "merge", "-q", "--recipe", f"{name}.yml", "-o", f"{name}/"], check=True)
    tensors, meta = read_safetensors(f"{name}/model.safetensors")
    assert open(f"{name}/mergekit_config.yml").read() == yaml_text, name
    assert meta["wavg_recipe"] == yaml_text, name
    return tensors, meta


def close(name, got, want):
    # Relative error, except for entries below a thousandth of the tensor's largest: base + sum of weighted task
    # vectors cancels there, and the reference sums its norms in another order (DARE's and DELLA's L1 ratio over a
    # random mask), so those are held to 1e-15 of the largest instead (a wrong mask entry is off by O(1)).
    assert sorted(got) == sorted(want), name
    for k in want:
        floor = max(1e-3 * np.max(np.abs(want[k])), 1e-300)
        err = np.max(np.abs(got[k] - want[k]) / np.maximum(np.abs(want[k]), floor))
        assert err <= 1e-12, (name, k, err)
    print(name, "ok")


def value(setting, k):
    return ref.evaluate_setting(setting, k, T[k])


# linear: a weight gradient over the layers and a filtered weight.
W0, W1 = [1, 0.2], [{"filter": "mlp", "value": 0.5}, {"value": 2}]
got, _ = run("linear", f"""models:
  - model: ft0
    parameters:
      weight: {W0}
  - model: ft1
    parameters:
      weight:
        - filter: mlp
          value: 0.5
        - value: 2
merge_method: linear
dtype: float64
""")
close("linear gradient and filter", got,
      {k: ref.linear([tunes[0][k], tunes[1][k]], [value(W0, k), value(W1, k)]) for k in SHAPES})

# task arithmetic: task negation (a negative weight) and lambda.
got, _ = run("ta", """models:
  - model: ft0
    parameters:
      weight: 1.0
  - model: ft1
    parameters:
      weight: -0.5
base_model: base
merge_method: task_arithmetic
parameters:
  lambda: 0.8
dtype: float64
""")
close("task_arithmetic negative weight", got,
      {k: ref.gta(base[k], [tunes[0][k], tunes[1][k]], [1, -0.5], 0.8, lambda tv, i: tv, False, False) for k in SHAPES})

# TIES as in mergekit's README: per-model densities (one a gradient) and weights (a gradient, a filter).
D = [[1, 0.7, 0.1], 0.5, 0.33]
W = [1.0, [0, 0.3, 0.7, 1], [{"filter": "mlp", "value": 0.5}, {"value": 0}]]
got, _ = run("ties", """models:
  - model: base
  - model: ft0
    parameters:
      density: [1, 0.7, 0.1]
      weight: 1.0
  - model: ft1
    parameters:
      density: 0.5
      weight: [0, 0.3, 0.7, 1]
  - model: ft2
    parameters:
      density: 0.33
      weight:
        - filter: mlp
          value: 0.5
        - value: 0
merge_method: ties
base_model: base
parameters:
  normalize: true
  int8_mask: true
dtype: float64
""")
close("ties per-model density and weight gradients", got,
      {k: ref.gta(base[k], [t[k] for t in tunes], [value(w, k) for w in W], 1,
                  lambda tv, i: ref.magnitude(tv, value(D[i], k)), True, True) for k in SHAPES})

# DARE-TIES with mergekit's default L1 rescale; the drawn seed is read back from the provenance.
got, meta = run("dare", """models:
  - model: ft0
    parameters:
      weight: 0.6
      density: 0.5
  - model: ft1
    parameters:
      weight: 0.4
      density: 0.7
base_model: base
merge_method: dare_ties
dtype: float64
""")
seed = int(re.search(r"seed (\d+)", meta["wavg_method"]).group(1))
close("dare_ties l1 rescale", got,
      {k: ref.gta(base[k], [tunes[0][k], tunes[1][k]], [0.6, 0.4], 1,
                  lambda tv, i, k=k, t=n: ref.dare(tv, [0.5, 0.7][i], seed, t, i), True, False)
       for n, k in enumerate(SHAPES)})

# della: a density gradient, epsilon per model (ft1's only for mlp, the global 0.1 elsewhere), lambda; the mask's
# seed from the provenance, as DARE's.
got, meta = run("della", """models:
  - model: ft0
    parameters:
      weight: 1.0
      density: [0.5, 0.3]
      epsilon: 0.2
  - model: ft1
    parameters:
      weight: 0.5
      density: 0.6
      epsilon:
        - filter: mlp
          value: 0.05
  - model: ft2
    parameters:
      weight: 0.8
      density: 0.4
base_model: base
merge_method: della
parameters:
  epsilon: 0.1
  lambda: 1.1
dtype: float64
""")
seed = int(re.search(r"seed (\d+)", meta["wavg_method"]).group(1))
DD, EE = [[0.5, 0.3], 0.6, 0.4], [0.2, [{"filter": "mlp", "value": 0.05}], 0.1]


def della_of(k, n):
    def sparsify(tv, i):
        e = value(EE[i], k)
        return ref.della(tv, value(DD[i], k), 0.1 if e is None else e, seed, n, i)
    return sparsify


close("della per-model density gradient and filtered epsilon", got,
      {k: ref.gta(base[k], [t[k] for t in tunes], [1.0, 0.5, 0.8], 1.1, della_of(k, n), True, True)
       for n, k in enumerate(SHAPES)})

# SLERP with mergekit's classic layer gradients per filter.
TS = [{"filter": "self_attn", "value": [0, 0.5, 0.3, 0.7, 1]}, {"filter": "mlp", "value": [1, 0.5, 0.7, 0.3, 0]},
      {"value": 0.5}]
got, _ = run("slerp", """models:
  - model: ft0
  - model: ft1
merge_method: slerp
base_model: ft0
parameters:
  t:
    - filter: self_attn
      value: [0, 0.5, 0.3, 0.7, 1]
    - filter: mlp
      value: [1, 0.5, 0.7, 0.3, 0]
    - value: 0.5
dtype: float64
""")
close("slerp gradient per filter", got, {k: ref.slerp(value(TS, k), tunes[0][k], tunes[1][k]) for k in SHAPES})

# model stock; the tokenizer and config come from the base.
got, _ = run("stock", """models:
  - model: ft0
  - model: ft1
  - model: ft2
base_model: base
merge_method: model_stock
dtype: float64
""")
close("model_stock", got, {k: ref.model_stock([t[k] for t in tunes], base[k]) for k in SHAPES})
assert json.load(open("stock/tokenizer.json")) == {"tag": "base"}
assert json.load(open("stock/config.json"))["tag"] == "base"
print("tokenizer and config from the base ok")

# nearswap: t a layer gradient, 0.15 for mlp; entries of ft0 within t of the base's take ft0's value.
NS = [{"filter": "mlp", "value": 0.15}, {"value": [0.02, 0.3]}]
got, _ = run("nearswap", """models:
  - model: ft0
base_model: base
merge_method: nearswap
parameters:
  t:
    - filter: mlp
      value: 0.15
    - value: [0.02, 0.3]
dtype: float64
""")
want = {k: ref.nearswap(value(NS, k), base[k], tunes[0][k]) for k in SHAPES}
close("nearswap t gradient per filter", got, want)
assert all(np.array_equal(got[k], want[k]) for k in SHAPES)  # element-wise in mergekit's operations: the same bits
print("nearswap bit for bit")

# slerp's t outside [0, 1] extrapolates along the arc, as mergekit's formula does.
got, _ = run("slerp_out", """models:
  - model: ft0
  - model: ft1
merge_method: slerp
base_model: ft0
parameters:
  t: [-0.5, 1.5]
dtype: float64
""")
close("slerp t outside [0, 1]", got, {k: ref.slerp(value([-0.5, 1.5], k), tunes[0][k], tunes[1][k]) for k in SHAPES})

# sce: half the entries (those whose task vectors vary most) selected, and every one (select_topk's default).
for topk, line in (("\nparameters:\n  select_topk: 0.5", "sce select_topk 0.5"), ("", "sce")):
    got, _ = run("sce", f"""models:
  - model: ft0
  - model: ft1
  - model: ft2
base_model: base
merge_method: sce{topk}
dtype: float64
""")
    close(line, got, {k: ref.sce([t[k] for t in tunes], base[k], 0.5 if topk else 1.0) for k in SHAPES})
    subprocess.run(["rm", "-r", "sce"], check=True)

# arcee_fusion: ft0's changes kept where their importance is an outlier.
got, _ = run("fusion", """models:
  - model: ft0
base_model: base
merge_method: arcee_fusion
dtype: float64
""")
close("arcee_fusion", got, {k: ref.arcee_fusion(base[k], tunes[0][k]) for k in SHAPES})
