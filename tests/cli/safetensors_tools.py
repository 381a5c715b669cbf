# Independent safetensors parsing for the CLI tests: numpy and the layout in the safetensors README, no wavg code.
import json
import struct

import numpy as np

DTYPES = {"F16": np.float16, "F32": np.float32, "F64": np.float64, "I8": np.int8, "I16": np.int16,
          "I32": np.int32, "I64": np.int64, "U8": np.uint8, "U16": np.uint16, "U32": np.uint32, "U64": np.uint64,
          "BOOL": np.bool_}


def load(path):
    """Returns (metadata, {name: array}) of a safetensors file; BF16 is returned as raw uint16 bit patterns."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        b, end = e["data_offsets"]
        dt = np.uint16 if e["dtype"] == "BF16" else DTYPES[e["dtype"]]
        out[name] = np.frombuffer(raw[8 + n + b:8 + n + end], dtype=np.dtype(dt).newbyteorder("<")).reshape(e["shape"])
    return meta, out
