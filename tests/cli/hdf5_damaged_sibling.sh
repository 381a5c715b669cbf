# A group of 600 datasets (h5py: its B-tree has six leaf nodes under a root) whose first leaf's right-sibling
# address lost one bit: h5py lists the group (H5Literate never follows the siblings) but cannot visit it; wavg
# refuses the file, exit 1, where it once merged it and copied the damage into a .h5 output.
/usr/bin/python3 - <<'PY'
import struct
import h5py
import numpy as np
for name, shift in (("a.h5", 0), ("b.h5", 1)):
    with h5py.File(name, "w") as f:
        for i in range(600):
            f.create_dataset(f"w{i:04d}", data=np.full((2,), i + shift, dtype=np.float32))
raw = bytearray(open("a.h5", "rb").read())
at = 0
while True:  # the leftmost leaf: level 0, no left sibling
    at = raw.find(b"TREE", at + 1)
    left, right = struct.unpack_from("<QQ", raw, at + 8)
    if raw[at + 5] == 0 and left == 2**64 - 1:
        break
raw[at + 16] ^= 0x01
open("damaged.h5", "wb").write(bytes(raw))
with h5py.File("damaged.h5", "r") as f:
    print("h5py lists", len(f.keys()))
    try:
        f.visit(lambda name: None)
    except RuntimeError as e:
        print("h5py visit:", e)
PY
"$WAVG" merge -q a.h5 b.h5 -o ok.h5 && echo "undamaged: exit 0"
"$WAVG" merge -q damaged.h5 b.h5 -o out.h5 || echo "damaged: exit $?"
ls out.h5 2>/dev/null || echo "no output left"
