# Every value torch.load(weights_only=True) accepts is read (issue 25): a checkpoint holding a torch dtype
# ({'dtype': torch.float16}), bytes (protocol 2 spells them _codecs.encode(text, 'latin1')), a bytearray, a complex
# number, a set and a collections.Counter merges; its tensors are torch's float64 mean of the inputs rounded once,
# every other value input 1's, as torch.load reads the output. torch 1.13 writes the files.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import collections, torch
for seed in (1, 2):
    torch.manual_seed(seed)
    torch.save({"w": torch.randn(3, 2), "dtype": torch.float16, "dtypes": [torch.int64, torch.bfloat16],
                "raw": b"ab\xff\x00", "buf": bytearray(b"xy"), "c": complex(1, seed), "tags": {"a"},
                "counts": collections.Counter({"x": seed})}, f"v{seed}.pt")
PY
"$WAVG" merge -q v1.pt v2.pt -o avg.pt
"$WAVG" inspect v1.pt | grep -a "not a tensor"
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import collections, torch
from pytorch_tools import mean_rounded, same
a, b = torch.load("v1.pt"), torch.load("v2.pt")
out = torch.load("avg.pt")
assert same(out["w"], mean_rounded([a["w"], b["w"]]))
for k in a:
    if k != "w":
        assert out[k] == a[k] and type(out[k]) is type(a[k]), k
print("ok")
PY
