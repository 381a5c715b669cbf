# An .npz whose member a.npy (uint8) holds, as its data, the whole stored record of member b.npy (the overlapping
# entries of a zip bomb): numpy.load refuses it (Python's zipfile: "Overlapped entries"), and so does wavg, exit 1,
# where it once listed both members, the one's bytes read again as the other's.
/usr/bin/python3 - <<'PY'
import io, struct, zlib
import numpy as np

def npy(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()

def local(name, data):  # a stored member's local header, as zipfile writes it
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, 0, 0x21, zlib.crc32(data), len(data), len(data),
                       len(name), 0) + name

def central(name, data, offset):
    return struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, 0, 0x21, zlib.crc32(data), len(data),
                       len(data), len(name), 0, 0, 0, 0, 0, offset) + name

b = npy(np.arange(4, dtype=np.float32))
b_record = local(b"b.npy", b) + b
a = npy(np.zeros(len(b_record), np.uint8))[:-len(b_record)] + b_record
a_local = local(b"a.npy", a)
directory = central(b"a.npy", a, 0) + central(b"b.npy", b, len(a_local) + len(a) - len(b_record))
end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 2, 2, len(directory), len(a_local) + len(a), 0)
open("nested.npz", "wb").write(a_local + a + directory + end)
try:
    z = np.load("nested.npz")
    print("numpy: read", [z[k].shape for k in z.files])
except Exception as e:
    print("numpy:", e)
PY
"$WAVG" inspect nested.npz || echo "exit $?"
