# Small .caffemodel files: a blob declaring 2^40 x 2^40 values over two, a layer of 1,000,000 nested unknown groups
# (protobuf wire type 3, which a reader skipping fields recursively would follow to the end of its stack), and a
# length of 2^62 bytes: inspect refuses each in one line, exit 1, within 256 MiB and 20 s (tests/support/bounded.py).
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import struct
from tf_bundle import put_varint as v  # protobuf's varint
tag = lambda field, wire: v(field << 3 | wire)
f = lambda field, payload: tag(field, 2) + v(len(payload)) + payload  # a length-delimited field
blob = lambda dims, values: f(7, f(1, b"".join(map(v, dims)))) + f(5, struct.pack(f"<{len(values)}f", *values))
layer = lambda name, body: f(1, name) + f(2, b"InnerProduct") + body
net = lambda *layers: f(1, b"n") + b"".join(f(100, l) for l in layers)
open("dims.caffemodel", "wb").write(net(layer(b"ip", f(7, blob([2**40, 2**40], [1, 2])))))
open("groups.caffemodel", "wb").write(net(layer(b"ip", tag(999, 3) * 1000000 + tag(999, 4) * 1000000)))
open("length.caffemodel", "wb").write(net(layer(b"ip", f(7, f(7, f(1, v(2))) + tag(5, 2) + v(2**62) + b"\0" * 100))))
PY
for f in dims groups length; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.caffemodel
done
