"""The tensors of tests/cli/dcp_from_safetensors.sh, as closed forms in numpy (every value exact in its dtype and
in float16), and a writer of them as a .safetensors file (8-byte header length, JSON header, the tensors' bytes).

    fresh_values.py OUT.safetensors
"""
import json
import sys

import numpy as np


def values():
    """{name: (safetensors dtype, numpy array of the dtype's bits)}; bf16 as the high halves of float32 values."""
    i = np.arange(15, dtype=np.float64).reshape(3, 5)
    bf16 = ((np.arange(7, dtype=np.float32) * 0.5 - 1.5).view(np.uint32) >> 16).astype(np.uint16)
    return {
        "embed.weight": ("F32", (i / 4 - 1).astype("<f4")),
        "layers.0.norm": ("BF16", bf16.astype("<u2")),
        "layers.0.proj": ("F16", (np.arange(4).reshape(2, 2) / 8 + 2).astype("<f2")),
        "position_ids": ("I64", np.arange(6, dtype="<i8").reshape(2, 3) - 2),
        "scale": ("F32", np.array(0.75, dtype="<f4")),
        "mask": ("BOOL", np.array([True, False, True])),
    }


def write(path):
    header, blobs, at = {}, [], 0
    for name, (dtype, a) in values().items():
        b = a.tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [at, at + len(b)]}
        blobs.append(b)
        at += len(b)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(len(text).to_bytes(8, "little") + text + b"".join(blobs))


if __name__ == "__main__":
    write(sys.argv[1])
