"""Reads Flax msgpack files with msgpack-python (Debian's python3-msgpack, an implementation independent of
msgpack-c) and numpy, following flax/serialization.py, for the CLI tests: no flax needed."""
import msgpack
import numpy as np


def _array(data):
    shape, dtype, buf = msgpack.unpackb(data, raw=False)
    if dtype == "bfloat16":
        # numpy has no bfloat16: widen the bits to float32, which holds every bfloat16 value exactly.
        bits = np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16
        return ("bfloat16", bits.view(np.float32).astype(np.float64).reshape(shape))
    a = np.frombuffer(buf, dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)
    return (dtype, a)


def _hook(code, data):
    if code in (1, 3):
        return ("ext%d" % code,) + _array(data)
    return msgpack.ExtType(code, data)


def load_tree(path):
    with open(path, "rb") as f:
        return msgpack.unpackb(f.read(), ext_hook=_hook, raw=False, strict_map_key=False)


def flatten(tree, prefix=""):
    """Returns {key path: (dtype name, numpy array)} for the arrays and {key path: value} for the other leaves."""
    arrays, kept = {}, {}
    items = tree.items() if isinstance(tree, dict) else enumerate(tree)
    for k, v in items:
        name = prefix + str(k)
        if isinstance(v, dict) and "__msgpack_chunked_array__" in v:
            parts = [v["chunks"][str(i)] for i in range(len(v["chunks"]))]
            shape = [v["shape"][str(i)] for i in range(len(v["shape"]))]
            arrays[name] = (parts[0][1], np.concatenate([p[2] for p in parts]).reshape(shape))
        elif isinstance(v, (dict, list)) and v:
            a, b = flatten(v, name + "/")
            arrays.update(a), kept.update(b)
        elif isinstance(v, tuple) and not isinstance(v, msgpack.ExtType):
            arrays[name] = v[1:]
        else:
            kept[name] = v
    return arrays, kept


def round_bf16(x):
    """Rounds float64 values to the nearest bfloat16 (ties to even) in one step, returned as float64."""
    bits = np.asarray(x, dtype=np.float64).view(np.uint64)
    low = bits & np.uint64((1 << 45) - 1)
    down = bits - low
    half = np.uint64(1 << 44)
    odd = (down >> np.uint64(45)) & np.uint64(1)
    up = (low > half) | ((low == half) & (odd == 1))
    return np.where(up, down + np.uint64(1 << 45), down).view(np.float64)


def mean(arrays, dtype):
    """numpy's float64 mean of the inputs, rounded once to `dtype` (wavg's arithmetic for float tensors)."""
    m = np.mean(np.stack([np.asarray(a, dtype=np.float64) for a in arrays]), axis=0)
    return round_bf16(m) if dtype == "bfloat16" else m.astype(dtype)
