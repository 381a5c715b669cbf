# mergekit's own examples folder (arcee-ai/mergekit examples/, LGPL-3.0: all six recipes) runs unchanged: its
# models are made here, at the very paths the recipes name (a mergekit recipe's model is a local folder when one
# exists), as float32 Llama-shaped folders of 40 layers. Each output has the recipe's dtype and layer count in
# config.json, and its tensors are numpy's formulas (mergekit_ref.py) rounded to the recipe's dtype (float16;
# arcee_fusion.yml's bfloat16).
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, os
import numpy as np
from hf_tools import llama_shapes, write_safetensors
rng = np.random.default_rng(11)
base = {k: rng.normal(size=s).astype(np.float32) for k, s in llama_shapes(40, 4, 6, 8).items()}
for name in ("TheBloke/Llama-2-13B-fp16", "psmathur/orca_mini_v3_13b", "garage-bAInd/Platypus2-13B",
             "WizardLM/WizardLM-13B-V1.2", "WizardLM/WizardMath-13B-V1.0", "mistralai/Mistral-7B-v0.1",
             "mistralai/Mistral-7B-Instruct-v0.2", "BioMistral/BioMistral-7B", "model_a", "model_b"):
    os.makedirs(name)
    t = base if name.endswith(("fp16", "v0.1", "model_a")) else {k: (v + rng.normal(scale=0.2, size=v.shape)).astype(np.float32)
                                                      for k, v in base.items()}
    write_safetensors(f"{name}/model.safetensors", t, {"format": "pt"})
    json.dump({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 40, "torch_dtype": "float32"},
              open(f"{name}/config.json", "w"))
PY
cat > linear.yml <<'YML'
models:
  - model: psmathur/orca_mini_v3_13b
    parameters:
      weight: 1.0
  - model: WizardLM/WizardLM-13B-V1.2
    parameters:
      weight: 0.3
  - model: garage-bAInd/Platypus2-13B
    parameters:
      weight: 0.5
merge_method: linear
dtype: float16
YML
cat > ties.yml <<'YML'
models:
  - model: psmathur/orca_mini_v3_13b
    parameters:
      density: [1, 0.7, 0.1] # density gradient
      weight: 1.0
  - model: garage-bAInd/Platypus2-13B
    parameters:
      density: 0.5
      weight: [0, 0.3, 0.7, 1] # weight gradient
  - model: WizardLM/WizardMath-13B-V1.0
    parameters:
      density: 0.33
      weight:
        - filter: mlp
          value: 0.5
        - value: 0
merge_method: ties
base_model: TheBloke/Llama-2-13B-fp16
parameters:
  normalize: true
  int8_mask: true
dtype: float16
YML
cat > gradient-slerp.yml <<'YML'
slices:
  - sources:
      - model: psmathur/orca_mini_v3_13b
        layer_range: [0, 40]
      - model: garage-bAInd/Platypus2-13B
        layer_range: [0, 40]
# or, the equivalent models: syntax:
# models:
#   - model: psmathur/orca_mini_v3_13b
#   - model: garage-bAInd/Platypus2-13B
merge_method: slerp
base_model: psmathur/orca_mini_v3_13b
parameters:
  t:
    - filter: self_attn
      value: [0, 0.5, 0.3, 0.7, 1]
    - filter: mlp
      value: [1, 0.5, 0.7, 0.3, 0]
    - value: 0.5 # fallback for rest of tensors
dtype: float16
YML
cat > orcamini-platy-44layer.yml <<'YML'
slices:
  - sources:
    - model: psmathur/orca_mini_v3_13b
      layer_range: [0, 24]
  - sources:
    - model: garage-bAInd/Platypus2-13B
      layer_range: [20, 40]
merge_method: passthrough
dtype: float16
YML
cat > bio-merge.yml <<'YML'
models:
  - model: mistralai/Mistral-7B-Instruct-v0.2
    parameters:
      density: 0.5
      weight: 0.5
  - model: BioMistral/BioMistral-7B
    parameters:
      density: 0.5
      weight: 0.5
merge_method: ties
base_model: mistralai/Mistral-7B-v0.1
parameters:
  normalize: false
  int8_mask: true
dtype: float16
YML
cat > arcee_fusion.yml <<'YML'
models:
  - model: model_a
  - model: model_b
merge_method: arcee_fusion
base_model: model_a
dtype: bfloat16
YML
for r in linear ties gradient-slerp orcamini-platy-44layer bio-merge arcee_fusion; do
  "$WAVG" merge -q --recipe $r.yml -o out-$r/
done
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json
import numpy as np, yaml
from hf_tools import read_safetensors
from mergekit_ref import arcee_fusion, evaluate_setting, gta, layer_t, linear, magnitude, slerp

load = lambda m: {k: v.astype(np.float64) for k, v in read_safetensors(f"{m}/model.safetensors")[0].items()}

def close(name, got, want, dtype="float16"):
    # Half a unit in the last place of the recipe's dtype (float16: 10 fraction bits; bfloat16: 7), relative.
    bits = {"float16": 10, "bfloat16": 7}[dtype]
    for k in want:
        assert got[k].dtype == (np.float16 if dtype == "float16" else np.float32), (name, k)
        assert np.allclose(got[k].astype(np.float64), want[k], rtol=2.0 ** -bits, atol=2 ** -14), (name, k)
    config = json.load(open(f"out-{name}/config.json"))
    assert config["torch_dtype"] == dtype, (name, config)
    print(name, "ok", config["num_hidden_layers"], "layers")

def by_model(name):
    recipe = yaml.safe_load(open(f"{name}.yml"))
    got = read_safetensors(f"out-{name}/model.safetensors")[0]
    return recipe, got, layer_t(list(got))

recipe, got, t = by_model("linear")
xs = [load(m["model"]) for m in recipe["models"]]
close("linear", got, {k: linear([x[k] for x in xs], [1.0, 0.3, 0.5]) for k in got})

recipe, got, t = by_model("ties")
base = load(recipe["base_model"])
xs = [load(m["model"]) for m in recipe["models"]]
want = {}
for k in got:
    p = [m["parameters"] for m in recipe["models"]]
    w = [evaluate_setting(q["weight"], k, t[k]) for q in p]
    d = [evaluate_setting(q["density"], k, t[k]) for q in p]
    want[k] = gta(base[k], [x[k] for x in xs], w, 1.0, lambda tv, i: magnitude(tv, d[i]), True, True)
close("ties", got, want)

recipe, got, t = by_model("gradient-slerp")
a, b = load("psmathur/orca_mini_v3_13b"), load("garage-bAInd/Platypus2-13B")
close("gradient-slerp", got, {k: slerp(evaluate_setting(recipe["parameters"]["t"], k, t[k]), a[k], b[k]) for k in got})

recipe, got, t = by_model("orcamini-platy-44layer")
want = {"model.embed_tokens.weight": a["model.embed_tokens.weight"], "model.norm.weight": b["model.norm.weight"],
        "lm_head.weight": b["lm_head.weight"]}
for k in got:
    if ".layers." in k:
        i = int(k.split(".")[2])
        src, layer = (a, i) if i < 24 else (b, i - 24 + 20)
        want[k] = src[k.replace(f".layers.{i}.", f".layers.{layer}.")]
assert len(got) == 3 + 44 * 8
close("orcamini-platy-44layer", got, want)

recipe, got, t = by_model("bio-merge")
base = load(recipe["base_model"])
xs = [load(m["model"]) for m in recipe["models"]]
close("bio-merge", got, {k: gta(base[k], [x[k] for x in xs], [0.5, 0.5], 1.0, lambda tv, i: magnitude(tv, 0.5), True,
                                False) for k in got})

recipe, got, t = by_model("arcee_fusion")
a, b = load("model_a"), load("model_b")
want = {k: arcee_fusion(a[k], b[k]) for k in got}
close("arcee_fusion", got, want, "bfloat16")
kept = sum(int(np.sum(want[k] != a[k])) for k in got)
assert 0 < kept < sum(v.size for v in want.values()) / 4, kept  # some of model_b's changes kept, most not
PY
