# Writes safetensors files from numpy arrays with the format's own rules (an 8-byte little-endian header length, the
# JSON header, the tensors' bytes in the order given), independently of wavg: for the CLI cases that need inputs
# larger than the samples. Usage from a case: sys.path.insert(0, ROOT + "/tests/support"); from write_safetensors
# import save.
import json
import struct

import numpy as np

_NAMES = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16", np.dtype(np.float64): "F64",
          np.dtype(np.int64): "I64", np.dtype(np.int32): "I32"}


def save(path, tensors):
    header, data, at = {}, [], 0
    for name, array in tensors.items():
        array = np.ascontiguousarray(array)
        header[name] = {"dtype": _NAMES[array.dtype], "shape": list(array.shape),
                        "data_offsets": [at, at + array.nbytes]}
        data.append(array.tobytes())
        at += array.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(data))


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    dtypes = {v: k for k, v in _NAMES.items()}
    out = {}
    for name, h in header.items():
        b, e = h["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + e], dtype=dtypes[h["dtype"]]).reshape(h["shape"])
    return out, meta
