"""Peer: numpy over memory-mapped safetensors. Sums every tensor of every input in float64, writes input 1's header
and the means. Usage: numpy_safetensors.py OUT IN..."""
import json
import struct
import sys

import numpy as np

DTYPES = {"F32": np.float32, "F64": np.float64, "F16": np.float16}
out, inputs = sys.argv[1], sys.argv[2:]


def open_st(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    return n, header, np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)


maps = [open_st(p) for p in inputs]
n, header, _ = maps[0]
with open(inputs[0], "rb") as f:
    head = f.read(8 + n)
with open(out, "wb") as o:
    o.write(head)
    for name, t in sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                          key=lambda kv: kv[1]["data_offsets"][0]):
        b, e = t["data_offsets"]
        dt = DTYPES[t["dtype"]]
        acc = maps[0][2][b:e].view(dt).astype(np.float64)
        for _, _, m in maps[1:]:
            acc += m[b:e].view(dt)
        o.write((acc / len(maps)).astype(dt).tobytes())
