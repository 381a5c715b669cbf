# A compact dataset (h5py, its values inside the layout message) whose stored size lost a byte: HDF5 1.10 copies
# the bytes the shape needs from the smaller buffer, reading past it (other memory: a different value each run, or
# a fault; found by fuzz.hdf5_diff), and HDF5 1.12 refuses it. wavg refuses the file, exit 1, where it once merged
# it with exit 0. Undamaged, the compact dataset merges to numpy's mean.
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
for name, values in (("a.h5", [1.5, 2.5]), ("b.h5", [3.5, 4.5])):
    with h5py.File(name, "w") as f:
        f["w"] = np.array(values, np.float32) * 2
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        c = h5py.h5d.create(f.id, b"c", h5py.h5t.IEEE_F32LE, h5py.h5s.create_simple((2,)), dcpl=dcpl)
        c.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array(values, np.float32))
raw = bytearray(open("a.h5", "rb").read())
at = raw.find(b"\x03\x00\x08\x00" + np.array([1.5, 2.5], np.float32).tobytes())  # version 3, compact, 8 bytes
assert at > 0 and raw.find(b"\x03\x00\x08\x00", at + 1) < 0
raw[at + 2] = 6
open("short.h5", "wb").write(bytes(raw))
PY
"$WAVG" merge -q a.h5 b.h5 -o ok.h5
/usr/bin/python3 -c "
import h5py, numpy as np
f = h5py.File('ok.h5', 'r')
assert f['c'][()].tobytes() == np.array([2.5, 3.5], np.float32).tobytes(), f['c'][()]
print('undamaged: c is the mean')"
"$WAVG" merge -q short.h5 b.h5 -o out.h5 || echo "damaged: exit $?"
ls out.h5 2>/dev/null || echo "no output left"
