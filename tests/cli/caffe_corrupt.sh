# Corrupt .caffemodel files: each is one line on stderr, exit 1, and a merge leaves no output behind. The files are
# protobuf wire bytes assembled by hand in Python (varints, tags, lengths), starting from a one-layer net.
/usr/bin/python3 - <<'PY'
import struct
def v(n):  # a varint
    out = b""
    while True:
        out += bytes([(n & 0x7f) | (0x80 if n > 0x7f else 0)])
        n >>= 7
        if not n:
            return out
def tag(field, wire):
    return v(field << 3 | wire)
def f(field, payload):  # a length-delimited field
    return tag(field, 2) + v(len(payload)) + payload
def blob(dims, values, extra=b""):
    return f(7, f(1, b"".join(v(d) for d in dims))) + f(5, struct.pack(f"<{len(values)}f", *values)) + extra
def layer(name, *blobs):
    return (f(1, name) if name else b"") + f(2, b"InnerProduct") + b"".join(f(7, b) for b in blobs)
def net(*layers):
    return f(1, b"n") + b"".join(f(100, l) for l in layers)
ok_layer = layer(b"ip", blob([2], [1, 2]))
cases = {
    "ok": net(ok_layer),
    "truncated": net(ok_layer)[:-3],
    "huge_length": f(1, b"n") + tag(100, 2) + v(2**62) + ok_layer,
    "broken_varint": net(f(1, b"ip") + f(7, f(7, f(1, v(2))) + tag(5, 2) + b"\xff" * 10 + b"\x01")),
    "count_mismatch": net(layer(b"ip", blob([3], [1, 2]))),
    "huge_dims": net(layer(b"ip", blob([2**40, 2**40], [1, 2]))),
    "negative_dim": net(layer(b"ip", blob([2**64 - 1], [1, 2]))),
    "both_layouts": net(ok_layer) + f(2, f(4, b"old") + f(6, blob([2], [1, 2]))),
    "duplicate": net(ok_layer, ok_layer),
    "unnamed": net(ok_layer, layer(b"", blob([1], [1]))),
    "diff": net(layer(b"ip", blob([2], [1, 2], f(6, struct.pack("<2f", 0, 0))))),
    "double_too": net(layer(b"ip", blob([2], [1, 2], f(8, struct.pack("<2d", 1, 2))))),
    "v0": f(1, b"n") + f(2, f(1, f(1, b"old") + f(50, blob([1], [1]))) + f(4, b"old")),
    "not_caffe": b"\x08\x96\x01" + b"\x00" * 20,
}
for name, data in cases.items():
    open(f"{name}.caffemodel", "wb").write(data)
PY
for c in ok truncated huge_length broken_varint count_mismatch huge_dims negative_dim both_layouts duplicate \
         unnamed diff double_too v0 not_caffe; do
  "$WAVG" merge -q $c.caffemodel ok.caffemodel -o out_$c.caffemodel && echo "$c: exit 0" || echo "$c: exit $?"
done
rm out_ok.caffemodel
ls out_* 2>/dev/null || echo "no output left"
