# Every recipe in samples/recipes runs on tiny Llama-shaped folders made here (models/llama-*): the output folder
# holds every tensor, in the recipe's dtype, finite, with the base's config and tokenizer and the recipe beside;
# the passthrough frankenmerge's layers are its sources' (rounded to bfloat16 here by numpy), renumbered.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, os
import numpy as np
from hf_tools import llama_shapes, write_safetensors
rng = np.random.default_rng(3)
shapes = llama_shapes(3, 8, 12, 16)
base = {k: rng.normal(size=s).astype(np.float32) for k, s in shapes.items()}
for name in ("base", "math", "code", "chat"):
    d = f"models/llama-{name}"
    os.makedirs(d)
    t = base if name == "base" else {k: (v + rng.normal(scale=0.1, size=v.shape)).astype(np.float32)
                                     for k, v in base.items()}
    write_safetensors(f"{d}/model.safetensors", t, {"format": "pt"})
    json.dump({"num_hidden_layers": 3, "name": name}, open(f"{d}/config.json", "w"))
    json.dump({"name": name, "added_tokens": [],  # task-negation's tokenizer_source: base reads its tokens
               "model": {"type": "BPE", "vocab": {f"t{i}": i for i in range(16)}, "merges": []}},
              open(f"{d}/tokenizer.json", "w"))
PY
for r in "$SAMPLES"/recipes/*.yml; do
  "$WAVG" merge -q --recipe "$r" -o "out-$(basename "$r" .yml)/"
done
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$SAMPLES/recipes" <<'PY'
import json, struct, sys
import numpy as np
from safetensors_tools import load
for name, dtype, source in (("ties-fine-tunes", "BF16", "base"), ("slerp-layer-gradient", "BF16", "math"),
                            ("task-negation", "F32", "base")):
    path = f"out-{name}/model.safetensors"
    meta, tensors = load(path)
    raw = open(path, "rb").read()
    header = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
    assert len(tensors) == 3 + 3 * 8, (name, len(tensors))
    assert all(h["dtype"] == dtype for k, h in header.items() if k != "__metadata__"), name
    for t in tensors.values():
        v = (t.astype(np.uint32) << 16).view(np.float32) if dtype == "BF16" else t
        assert np.all(np.isfinite(v)), name
    assert json.load(open(f"out-{name}/config.json"))["name"] == source, name
    assert json.load(open(f"out-{name}/tokenizer.json"))["name"] == source, name
    assert open(f"out-{name}/mergekit_config.yml").read() == open(f"{sys.argv[1]}/{name}.yml").read(), name
    assert meta["wavg_recipe"] == open(f"{sys.argv[1]}/{name}.yml").read(), name
    print(name, "ok")

def bf16(a):  # round to nearest even, as uint16 bit patterns
    b = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)

meta, got = load("out-passthrough-frankenmerge/model.safetensors")
_, math = load("models/llama-math/model.safetensors")
_, code = load("models/llama-code/model.safetensors")
want = {"model.embed_tokens.weight": math["model.embed_tokens.weight"], "model.norm.weight": code["model.norm.weight"],
        "lm_head.weight": code["lm_head.weight"]}
for out_layer, (src, layer) in enumerate(((math, 0), (math, 1), (code, 1), (code, 2))):
    for k, v in src.items():
        if k.startswith(f"model.layers.{layer}."):
            want[k.replace(f"model.layers.{layer}.", f"model.layers.{out_layer}.")] = v
assert sorted(got) == sorted(want)
assert all(np.array_equal(got[k], bf16(want[k])) for k in want)
config = json.load(open("out-passthrough-frankenmerge/config.json"))
assert config["num_hidden_layers"] == 4 and config["name"] == "math", config
assert meta["wavg_recipe"] == open(f"{sys.argv[1]}/passthrough-frankenmerge.yml").read()
print("passthrough-frankenmerge ok")
PY
