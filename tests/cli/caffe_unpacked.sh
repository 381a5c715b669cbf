# Blob values stored other than as one packed field, as old files and other writers store them: unpacked floats
# (one field per value, as protobuf before 2.3 wrote them), unpacked doubles, a packed data field split in two, and a
# packed field after the blob's shape at an odd byte offset. The files are wire bytes assembled by hand in Python;
# the merge's output is read by python3-protobuf (the tests' caffe_test.proto) and every value equals numpy's mean,
# written packed in input 1's field order, with a layer without blobs and the net's fields kept where they were.
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import struct
from caffe_tools import field as f, varint as v
def shape(*dims):
    return f(7, f(1, b"".join(v(d) for d in dims)))
for k, s in ((1, 1.0), (2, 3.0)):
    unpacked = b"".join(v(5 << 3 | 5) + struct.pack("<f", x * s) for x in (1.0, -2.0, 0.25))
    unpacked64 = b"".join(v(8 << 3 | 1) + struct.pack("<d", x * s) for x in (1e-3, 7.0))
    split = f(5, struct.pack("<2f", 1 * s, 2 * s)) + f(5, struct.pack("<f", 3 * s))
    late = b"\x08\x01" + shape(2, 1) + f(5, struct.pack("<2f", -s, 0.5 * s))  # num 1 (ignored: shape wins)
    net = (f(1, b"net") + f(100, f(1, b"data") + f(2, b"Input")) +
           f(100, f(1, b"ip") + f(2, b"InnerProduct") + f(7, shape(3) + unpacked) + f(7, shape(3) + split) +
              f(7, late)) +
           f(100, f(1, b"d") + f(7, shape(2) + unpacked64)) + f(3, b"input-name"))
    open(f"in{k}.caffemodel", "wb").write(net)
PY
"$WAVG" merge -q in1.caffemodel in2.caffemodel -o out.caffemodel
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
import caffe_tools as ct
ins = [ct.tensors(ct.load(f"in{k}.caffemodel")) for k in (1, 2)]
net = ct.load("out.caffemodel")
out = ct.tensors(net)
assert list(out) == ["ip/0", "ip/1", "ip/2", "d/0"], list(out)
for name, got in out.items():
    want = ((ins[0][name].astype(np.float64) + ins[1][name]) / 2).astype(ins[0][name].dtype)
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes(), (name, got, want)
assert [l.name for l in net.layer] == ["data", "ip", "d"] and net.layer[2].blobs[0].double_data[1] == 14.0
raw = open("out.caffemodel", "rb").read()
# Packed, the 3 unpacked floats take 1 byte less, the 2 doubles as many, the split field 2 bytes less.
assert raw.endswith(b"\x1a\x0ainput-name") and len(raw) == len(open("in1.caffemodel", "rb").read()) - 3, len(raw)
print("unpacked, split and late values merged:", ", ".join(f"{n} {list(a.shape)}" for n, a in out.items()))
PY
