"""Checks a merge of run folder steps 200 and 300 (tests/orbax/train_2 and train_3), converted to safetensors: float
leaf L (in _METADATA's order) holds 0.625 + L/8 + i/16 at element i, the mean of make_orbax.py's closed forms for
K = 2 and 3; prints the other leaves' values (the counters, input 1's) and how many float leaves were checked.

    /usr/bin/python3 last_two_mean.py MERGED_FOLDER MERGED.safetensors
"""
import json
import struct
import sys

import numpy as np

folder, path = sys.argv[1:3]
raw = open(path, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
leaf = 0
for entry in json.load(open(f"{folder}/_METADATA"))["tree_metadata"].values():
    name = "/".join(k["key"] for k in entry["key_metadata"])
    h = header.get(name)
    if not h:
        continue
    a, b = h["data_offsets"]
    v = np.frombuffer(raw[8 + n + a:8 + n + b], dtype={"F32": np.float32, "I32": np.int32, "I64": np.int64}[h["dtype"]])
    if h["dtype"] == "F32":
        assert np.array_equal(v, (0.625 + leaf / 8 + np.arange(v.size) / 16).astype(np.float32)), name
        leaf += 1
    else:
        print(name, v.tolist())
print(leaf, "float arrays the mean of steps 200 and 300")
