# Small HDF5 files written by h5py and edited: a dataset whose dataspace says 2^40 values over 18,640 bytes of storage,
# and 300 groups nested in one another (the walks stop at 256, naming the path cut short): inspect refuses each in
# one line, exit 1, within 256 MiB and 20 s (tests/support/bounded.py).
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "python3-h5py missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
with h5py.File("shape.h5", "w") as f:
    f["w"] = np.zeros(0x1234, dtype=np.float32)
data = bytearray(open("shape.h5", "rb").read())
dim = (0x1234).to_bytes(8, "little")
at = data.find(dim)
assert at > 0
data[at:at + 8] = (1 << 40).to_bytes(8, "little")
open("shape.h5", "wb").write(bytes(data))
with h5py.File("deep.h5", "w") as f:
    g = f
    for _ in range(300):
        g = g.create_group("g")
    g["w"] = np.arange(2, dtype=np.float32)
PY
for f in shape deep; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.h5
done
