# HDF5 datasets of numbers wavg has no dtype for, written by h5py beside a float32 one: a long double (numpy's
# float128), a compound of two float32 that is not h5py's complex (members a and b, not r and i) and a float32
# layout with exponent bias 100. Each is refused by name (exit 1) by inspect, convert and merge into .h5, where they
# were once skipped without a word (absent from inspect, dropped by convert, input 1's values kept by a merge).
# h5py's complex64 and complex128 are read (hdf5_complex).
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "python3-h5py missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
def save(path, name, data=None, dtype=None):
    with h5py.File(path, "w") as f:
        f["w"] = np.arange(3, dtype=np.float32)
        if dtype is None:
            f[name] = data
        else:  # a type numpy has no name for, written with its raw bits
            d = h5py.h5d.create(f.id, name.encode(), dtype, h5py.h5s.create_simple((2,)))
            d.write(h5py.h5s.ALL, h5py.h5s.ALL, np.array([0x40000000, 0x3f800000], dtype=np.uint32), mtype=dtype)
save("ld.h5", "x", np.array([1.5, 2.5], dtype=np.longdouble))
save("pair.h5", "z", np.array([(1, 2), (3, -4)], dtype=[("a", np.float32), ("b", np.float32)]))
bias = h5py.h5t.IEEE_F32LE.copy()
bias.set_ebias(100)
save("bias.h5", "b", dtype=bias)
PY
for f in ld pair bias; do
  cp $f.h5 ${f}2.h5
  "$WAVG" inspect $f.h5 >/dev/null || echo "inspect $f.h5: exit $?"
  "$WAVG" convert -q $f.h5 -o $f.safetensors || echo "convert $f.h5: exit $?"
  "$WAVG" merge -q $f.h5 ${f}2.h5 -o merged_$f.h5 || echo "merge $f.h5: exit $?"
  [ ! -e $f.safetensors ] && [ ! -e merged_$f.h5 ] || { echo "$f: an output was written"; exit 1; }
done
