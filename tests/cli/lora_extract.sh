# merge --lora-extract R takes a base and its fine-tune and writes a PEFT adapter folder of rank R: for each 2-D
# weight, s*B*A equals numpy's best rank-min(R, out, in) approximation of the difference (its truncated SVD in
# float64) within float32 rounding, an embedding (embed_tokens) as lora_embedding_A/B whose product is the
# difference transposed; the config names every module in target_modules, lora_alpha R, and rank_pattern the
# modules of lower rank; a 1-D tensor that differs is left out and counted (-v); folded back with --lora-apply the
# adapter gives base + that approximation. A model that is not the base's shape is refused (exit 3).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" "$ROOT/tests/cli/lora_tools.py" .
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import write_safetensors
rng = np.random.default_rng(7)
shapes = {"model.embed_tokens.weight": (9, 4), "model.layers.0.q_proj.weight": (6, 4),
          "model.layers.0.k_proj.weight": (2, 4), "model.norm.weight": (4,), "lm_head.weight": (9, 4)}
base = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
tuned = {n: (v + 0.1 * rng.standard_normal(v.shape)).astype(np.float32) for n, v in base.items()}
write_safetensors("base.safetensors", base)
write_safetensors("tuned.safetensors", tuned)
write_safetensors("other.safetensors", {**tuned, "lm_head.weight": np.zeros((9, 3), np.float32)})
PY
"$WAVG" merge -v --lora-extract 3 base.safetensors tuned.safetensors -o adapter/ 2>err.txt
ls adapter
grep -c "discarded energy" err.txt
grep "differ from the base" err.txt
"$WAVG" merge -q --lora-apply base.safetensors adapter -o folded.safetensors
status=0
"$WAVG" merge -q --lora-extract 3 base.safetensors other.safetensors -o refused/ 2>&1 || status=$?
echo "exit $status"
/usr/bin/python3 - <<'PY'
import json, re, numpy as np
from hf_tools import read_safetensors
from lora_tools import read_adapter
base, tuned = read_safetensors("base.safetensors")[0], read_safetensors("tuned.safetensors")[0]
config = json.load(open("adapter/adapter_config.json"))
assert config["peft_type"] == "LORA" and config["r"] == 3 and config["lora_alpha"] == 3, config
assert config["target_modules"] == ["model.embed_tokens", "model.layers.0.q_proj", "model.layers.0.k_proj",
                                    "lm_head"], config
assert config["rank_pattern"] == {"model.layers.0.k_proj": 2}, config
tensors = read_safetensors("adapter/adapter_model.safetensors")[0]
folded = read_safetensors("folded.safetensors")[0]
noted = dict(re.findall(r"(\S+): rank \d+, discarded energy (\S+) of", open("err.txt").read()))
def best(d, k):
    u, s, vt = np.linalg.svd(d)
    return (u[:, :k] * s[:k]) @ vt[:k], (s[k:] ** 2).sum() / (s ** 2).sum()
for name in ("model.embed_tokens", "model.layers.0.q_proj", "model.layers.0.k_proj", "lm_head"):
    d = tuned[name + ".weight"].astype(np.float64) - base[name + ".weight"]
    k = min(3, *d.shape)
    p = "base_model.model." + name
    s = 3 / k
    if name.endswith("embed_tokens"):
        a, b = tensors[p + ".lora_embedding_A"], tensors[p + ".lora_embedding_B"]
        got = s * (b.astype(np.float64) @ a).T
    else:
        a, b = tensors[p + ".lora_A.weight"], tensors[p + ".lora_B.weight"]
        got = s * b.astype(np.float64) @ a
    want, lost = best(d, k)
    assert a.shape[0] == k and b.shape[1] == k, (name, a.shape, b.shape)
    assert np.allclose(got, want, rtol=1e-5, atol=1e-6), (name, got, want)
    assert abs(float(noted[p]) - lost) <= 1e-5 * lost + 1e-12, (name, noted[p], lost)
    assert np.allclose(folded[name + ".weight"], base[name + ".weight"] + want, rtol=1e-5, atol=1e-6), name
assert np.array_equal(folded["model.norm.weight"], base["model.norm.weight"])
print("rank-3 truncations of the differences, as numpy's SVD")
PY
