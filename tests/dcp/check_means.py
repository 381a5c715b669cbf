"""Checks a safetensors merge of samples/dcp checkpoints against the samples' closed forms at mean index K
(samples/dcp/make_dcp.py), exactly: numpy only.    check_means.py FILE K"""
import json
import struct
import sys

import numpy as np

path, k = sys.argv[1], float(sys.argv[2])
with open(path, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
header.pop("__metadata__", None)
shapes = {"fc1.weight": (5, 3), "fc1.bias": (5,), "fc2.weight": (4, 5), "fc2.bias": (4,)}
want = {}
for p, (name, shape) in enumerate(shapes.items()):
    i = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    want["model." + name] = k + p + i / 16
    want[f"optim.state.{p}.exp_avg"] = -k / 2 + p + i / 32
    want[f"optim.state.{p}.exp_avg_sq"] = k / 4 + p + i / 64
want["model.scale"] = k + np.arange(5) / 8
assert sorted(header) == sorted(want), sorted(header)
for name, w in want.items():
    h = header[name]
    assert h["dtype"] == "F32" and tuple(h["shape"]) == w.shape, (name, h)
    got = np.frombuffer(data[h["data_offsets"][0]:h["data_offsets"][1]], dtype="<f4").reshape(w.shape)
    assert np.array_equal(got, w.astype(np.float32)), (name, got, w)
print("ok")
