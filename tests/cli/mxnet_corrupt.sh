# Corrupt MXNet .params files: each is one line on stderr, exit 1, and a merge leaves no output behind. The files
# are assembled by hand in Python from the NDArray list layout (formats/mxnet/mxnet.hpp), starting from one V2
# float32 array of shape (2,) named "w".
/usr/bin/python3 - <<'PY'
import struct
def arr(magic=0xF993FAC9, stype=0, dims=(2,), dev=1, flag=0, data=struct.pack("<2f", 1, 2)):
    return (struct.pack("<Iii", magic, stype, len(dims)) + b"".join(struct.pack("<q", d) for d in dims) +
            struct.pack("<iii", dev, 0, flag) + data)
def names(*ns):
    return struct.pack("<Q", len(ns)) + b"".join(struct.pack("<Q", len(n)) + n for n in ns)
def lst(*arrays, count=None, tail=names(b"w")):
    return struct.pack("<QQQ", 0x112, 0, len(arrays) if count is None else count) + b"".join(arrays) + tail
cases = {
    "ok": lst(arr()),
    "truncated": lst(arr())[:50],
    "huge_count": lst(arr(), count=2**63),
    "huge_name": lst(arr(), tail=struct.pack("<QQ", 1, 2**63) + b"w"),
    "huge_dims": lst(arr(dims=(2**62,))),
    "wrong_magic": lst(arr(magic=0xF993FACB)),
    "sparse": lst(arr(stype=1)),
    "dtype": lst(arr(flag=42)),
    "names": lst(arr(), tail=names(b"w", b"v")),
    "not_mxnet": struct.pack("<QQQ", 0x113, 0, 0),
}
for name, data in cases.items():
    open(f"{name}.params", "wb").write(data)
PY
for c in ok truncated huge_count huge_name huge_dims wrong_magic sparse dtype names not_mxnet; do
  "$WAVG" merge -q $c.params ok.params -o out_$c.params && echo "$c: exit 0" || echo "$c: exit $?"
done
rm out_ok.params
ls out_* 2>/dev/null || echo "no output left"
