# Issue 25: tied names. Input 1 ties emb.weight and out.weight to one storage (weight tying); input 2 holds them
# apart with different values. Each name needs its own mean: a .safetensors output holds them apart (and says so),
# a .pt output keeping input 1's single storage is refused naming both, and with the untied input first the .pt
# output holds them apart. A tied copy that a safetensors file drops (lm_head.weight of a .bin state_dict beside a
# safetensors file without it) merges without --tensors intersection. Means checked with numpy, outputs loaded by
# torch 1.13.
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || { echo "torch or numpy missing"; exit 77; }
/usr/bin/python3 - "$WAVG" <<'PY'
import json, struct, subprocess, sys
import numpy as np
import torch

wavg = sys.argv[1]
torch.manual_seed(0)
emb1 = torch.randn(4, 3)
tied = {"emb.weight": emb1, "out.weight": emb1, "out.bias": torch.randn(4)}
torch.save(tied, "tied.pt")
apart = {"emb.weight": torch.randn(4, 3), "out.weight": torch.randn(4, 3), "out.bias": torch.randn(4)}
torch.save(apart, "apart.pt")
mean = lambda a, b: ((a.numpy().astype(np.float64) + b.numpy()) / 2).astype(np.float32)

def merge(*args):
    p = subprocess.run([wavg, "merge", *args], capture_output=True, text=True)
    return p.returncode, p.stderr.replace(wavg, "wavg")

def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    return {k: np.frombuffer(raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]], np.float32).reshape(v["shape"])
            for k, v in head.items() if k != "__metadata__"}

code, err = merge("tied.pt", "apart.pt", "-o", "out.safetensors")
print(code, err.strip())
out = read_safetensors("out.safetensors")
for k in tied:
    assert np.array_equal(out[k], mean(tied[k], apart[k])), k

code, err = merge("tied.pt", "apart.pt", "-o", "out.pt")
print(code, err.strip())

code, err = merge("apart.pt", "tied.pt", "-o", "out2.pt")
print(code, err.strip())
out = torch.load("out2.pt")
for k in tied:
    assert np.array_equal(out[k].numpy(), mean(apart[k], tied[k])), k
assert out["emb.weight"].data_ptr() != out["out.weight"].data_ptr()

# Both tied: the output keeps the tie (one storage in torch) and the mean.
emb2 = torch.randn(4, 3)
torch.save({"emb.weight": emb2, "out.weight": emb2, "out.bias": torch.randn(4)}, "tied2.pt")
code, err = merge("tied.pt", "tied2.pt", "-o", "both.pt")
print(code, err.strip())
out = torch.load("both.pt")
assert out["emb.weight"].data_ptr() == out["out.weight"].data_ptr()
assert np.array_equal(out["out.weight"].numpy(), mean(emb1, emb2))

# A Hugging Face .bin state_dict (lm_head.weight tied to the embedding) and a safetensors file of the same model,
# which leaves the tied copy out.
e1, e2 = torch.randn(5, 2), torch.randn(5, 2)
torch.save({"model.embed_tokens.weight": e1, "lm_head.weight": e1, "model.norm.weight": torch.ones(2)}, "pytorch_model.bin")
body = e2.numpy().tobytes() + np.full(2, 3, np.float32).tobytes()
head = json.dumps({"model.embed_tokens.weight": {"dtype": "F32", "shape": [5, 2], "data_offsets": [0, 40]},
                   "model.norm.weight": {"dtype": "F32", "shape": [2], "data_offsets": [40, 48]}}).encode()
open("model.safetensors", "wb").write(struct.pack("<Q", len(head)) + head + body)
code, err = merge("pytorch_model.bin", "model.safetensors", "-o", "hf.bin", "--format", "pytorch")
print(code, err.strip())
out = torch.load("hf.bin")
assert np.array_equal(out["model.embed_tokens.weight"].numpy(), mean(e1, e2))
assert out["lm_head.weight"].data_ptr() == out["model.embed_tokens.weight"].data_ptr()
code, err = merge("model.safetensors", "pytorch_model.bin", "-o", "hf.safetensors", "-v")
print(code, err.strip().splitlines()[-2])
out = read_safetensors("hf.safetensors")
assert sorted(out) == ["model.embed_tokens.weight", "model.norm.weight"]
assert np.array_equal(out["model.embed_tokens.weight"], mean(e2, e1))
print("ok")
PY
