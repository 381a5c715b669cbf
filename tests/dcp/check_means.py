"""Checks a safetensors merge of samples/dcp (or, with "deepspeed", samples/deepspeed) checkpoints against the
samples' closed forms at mean index K (their make_*.py), exactly: numpy only.    check_means.py FILE K [deepspeed]"""
import json
import struct
import sys

import numpy as np

path, k = sys.argv[1], float(sys.argv[2])
deepspeed = sys.argv[3:] == ["deepspeed"]
with open(path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
header.pop("__metadata__", None)
out = 3 if deepspeed else 4
shapes = {"fc1.weight": (5, 3), "fc1.bias": (5,), "fc2.weight": (out, 5), "fc2.bias": (out,)}
prefix = "" if deepspeed else "model."
want = {}
for p, (name, shape) in enumerate(shapes.items()):
    i = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    want[prefix + name] = k + p + i / 16
    if not deepspeed:
        want[f"optim.state.{p}.exp_avg"] = -k / 2 + p + i / 32
        want[f"optim.state.{p}.exp_avg_sq"] = k / 4 + p + i / 64
want[prefix + "scale"] = k + np.arange(5) / 8
assert sorted(header) == sorted(want), sorted(header)
for name, w in want.items():
    h = header[name]
    assert h["dtype"] == "F32" and tuple(h["shape"]) == w.shape, (name, h)
    got = np.frombuffer(data[h["data_offsets"][0]:h["data_offsets"][1]], dtype="<f4").reshape(w.shape)
    assert np.array_equal(got, w.astype(np.float32)), (name, got, w)
print("ok")
