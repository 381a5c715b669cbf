# Optional: torch.load(weights_only=True) of wavg's .pt outputs of uint16/32/64 tensors gives the closed forms
# (samples/torch_uint/expected.npz). Needs a Python with torch >= 2.3 (uint16/32/64), named by WAVG_TORCH2_PYTHON;
# skipped without one. A mean of the torch 2.15 samples keeps input 1's pickle (_rebuild_tensor_v3, the transposed
# strides, the storage offset, the Parameter and the Python attribute), its float32 tensor averaged and its integers
# input 1's; a plain state_dict written from safetensors (and as hf-bin shards) pickles them with _rebuild_tensor_v3
# as torch does.
PY=${WAVG_TORCH2_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import torch; torch.uint16' 2>/dev/null ||
  { echo "no WAVG_TORCH2_PYTHON with torch >= 2.3"; exit 77; }
S="$SAMPLES"/torch_uint
"$WAVG" merge -q "$S"/a.pt "$S"/b.pt -o mean.pt
"$WAVG" convert -q "$S"/b.pt -o b.safetensors
"$WAVG" convert -q b.safetensors -o plain.pt
"$WAVG" convert -q b.safetensors -o shards/ --format hf-bin
"$PY" - "$S"/expected.npz <<'PYTHON'
import sys
import numpy as np
import torch
want = np.load(sys.argv[1])
names = ["u16", "u32", "u64", "u16_slice", "w", "opt.step", "tagged"]

def flat(obj, prefix=""):
    if isinstance(obj, dict):
        return {k2: v2 for k, v in obj.items() for k2, v2 in flat(v, f"{prefix}.{k}" if prefix else k).items()}
    return {prefix: obj}

def check(got, ref, what):
    assert sorted(got) == sorted(names), (what, sorted(got))
    for n in names:
        t = got[n].detach()
        assert t.dtype == getattr(torch, str(ref[n].dtype)), (what, n, t.dtype)
        assert np.array_equal(t.numpy(), ref[n]), (what, n, t)

a = {n: want["a/" + n] for n in names}
b = {n: want["b/" + n] for n in names}
mean = dict(a, w=((a["w"].astype(np.float64) + b["w"]) / 2).astype(np.float32))
m = torch.load("mean.pt", weights_only=True)
check(flat(m), mean, "mean.pt")
assert m["u64"].stride() == (1, 2) and m["u16_slice"].storage_offset() == 3
assert isinstance(m["opt"]["step"], torch.nn.Parameter) and m["tagged"].note == "a Python attribute"
check(torch.load("plain.pt", weights_only=True), b, "plain.pt")
shards = {}
for f in __import__("glob").glob("shards/*.bin"):
    shards.update(torch.load(f, weights_only=True))
check(shards, b, "hf-bin")
print("ok")
PYTHON
