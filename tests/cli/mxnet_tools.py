# Independent MXNet NDArray list parsing for the CLI tests, written from apache/mxnet's NDArray::Save / Load /
# LegacyLoad (src/ndarray/ndarray.cc) with numpy, no wavg code. Dense arrays only.
import struct

import numpy as np

# mshadow TypeFlag -> numpy (bfloat16 as raw uint16 bit patterns).
FLAGS = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32, 5: np.int8, 6: np.int64,
         7: np.bool_, 8: np.int16, 9: np.uint16, 10: np.uint32, 11: np.uint64, 12: np.uint16}
MAGIC = {0xF993FACA: "V3", 0xF993FAC9: "V2", 0xF993FAC8: "V1"}


def load(path):
    """Returns (names, arrays, encodings): names is [] for a plain list; the whole file must be consumed."""
    raw = open(path, "rb").read()
    at = 0

    def take(fmt):
        nonlocal at
        v = struct.unpack_from("<" + fmt, raw, at)
        at += struct.calcsize("<" + fmt)
        return v[0]

    assert take("Q") == 0x112
    take("Q")
    arrays, encodings = [], []
    for _ in range(take("Q")):
        first = take("I")
        enc = MAGIC.get(first, "legacy")
        if enc in ("V3", "V2"):
            assert take("i") == 0, "sparse storage"
        if enc == "legacy":
            shape = [take("I") for _ in range(first)]
        else:
            shape = [take("q") for _ in range(take("i"))]
        take("i"), take("i")  # context: device type and id
        dt = np.dtype(FLAGS[take("i")]).newbyteorder("<")
        n = int(np.prod(shape, dtype=np.int64))
        arrays.append(np.frombuffer(raw, dtype=dt, count=n, offset=at).reshape(shape))
        at += n * dt.itemsize
        encodings.append(enc)
    names = []
    for _ in range(take("Q")):
        length = take("Q")
        names.append(raw[at:at + length].decode())
        at += length
    assert names == [] or len(names) == len(arrays)
    assert at == len(raw), "trailing bytes"
    return names, arrays, encodings


def load_dict(path):
    """Returns {name: array}, naming a plain list's arrays by index."""
    names, arrays, _ = load(path)
    return dict(zip(names or [str(i) for i in range(len(arrays))], arrays))
