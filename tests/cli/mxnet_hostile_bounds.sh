# Small MXNet .params files that declare 2^60 arrays, an array of 2^62 x 2^62 values and a name of 2^62 bytes: inspect
# refuses each in one line, exit 1, within 256 MiB and 20 s (tests/support/bounded.py).
/usr/bin/python3 - <<'PY'
import struct
def arr(dims=(2,), data=struct.pack("<2f", 1, 2)):
    return (struct.pack("<Iii", 0xF993FAC9, 0, len(dims)) + b"".join(struct.pack("<q", d) for d in dims) +
            struct.pack("<iii", 1, 0, 0) + data)
def lst(arrays, count, tail):
    return struct.pack("<QQQ", 0x112, 0, count) + b"".join(arrays) + tail
names = struct.pack("<QQ", 1, 1) + b"w"
open("count.params", "wb").write(lst([arr()] * 100, 2**60, names))
open("dims.params", "wb").write(lst([arr(dims=(2**62, 2**62))], 1, names))
open("name.params", "wb").write(lst([arr()], 1, struct.pack("<QQ", 1, 2**62) + b"w" * 100))
PY
for f in count dims name; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.params
done
