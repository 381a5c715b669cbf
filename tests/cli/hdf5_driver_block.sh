# A version 0 superblock whose driver information address is damaged (one byte: a random-damage run found it) opens
# for reading, but the output, a copy of input 1 opened for writing, failed to flush it: the error named the output,
# and HDF5's own clean-up at exit then faulted (exit 139). Refused naming the input, exit 1, nothing written.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
for name, v in (("a.h5", 1), ("b.h5", 3)):
    with h5py.File(name, "w") as f:
        f["dense/kernel"] = np.full((2, 2), v, np.float32)
b = bytearray(open("a.h5", "rb").read())
assert b[:8] == b"\x89HDF\r\n\x1a\n" and b[8] == 0 and b[48:56] == b"\xff" * 8  # superblock v0, no driver block
b[55] = 0x52
open("bad.h5", "wb").write(b)
PY
set +e
"$WAVG" merge -q bad.h5 b.h5 -o out.h5
echo "merge: exit $?"
set -e
[ ! -e out.h5 ] || { echo "an output was written"; exit 1; }
"$WAVG" merge -q a.h5 b.h5 -o out.h5
/usr/bin/python3 -c '
import h5py, numpy as np
assert np.array_equal(h5py.File("out.h5")["dense/kernel"][()], np.full((2, 2), 2, np.float32))'
echo "healthy: merged"
