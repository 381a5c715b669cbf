# Complex numbers as h5py writes them (complex64 and complex128: compounds {r, i} of two float32 or float64), in
# contiguous, chunked and gzip-compressed datasets and a scalar, beside a float32 one: inspect shows them as
# complex64 / complex128 with their own shapes; a merge of three averages the real and imaginary parts element-wise
# (each numpy's float64 mean, rounded once to the part's type) and writes them back in h5py's type, as does a
# convert to .npz (numpy reads complex arrays), and a convert to safetensors, which has no complex dtype, is refused
# naming the tensor. Once they were refused by name, and before that dropped without a word.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "python3-h5py missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
rng = np.random.default_rng(39)
def c(shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype) * np.float32(3)
for i in range(3):
    with h5py.File(f"in{i}.h5", "w") as f:
        f["w"] = rng.standard_normal(5).astype(np.float32)
        f["z64"] = c((2, 3), np.complex64)
        f["z128"] = c((4,), np.complex128)
        f.create_dataset("g/zc", data=c((100, 7), np.complex64), chunks=(10, 7), compression="gzip")
        f["s"] = np.complex64(1.5 - 2.25j * (i + 1))
PY
"$WAVG" inspect in0.h5 | grep -v '^  wavg_'
"$WAVG" merge -q in0.h5 in1.h5 in2.h5 -o merged.h5
"$WAVG" convert -q merged.h5 -o merged.npz
"$WAVG" convert -q merged.h5 -o merged.safetensors || echo "convert to safetensors: exit $?"
[ ! -e merged.safetensors ] || { echo "a safetensors output was written"; exit 1; }
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
ins = [h5py.File(f"in{i}.h5", "r") for i in range(3)]
got = h5py.File("merged.h5", "r")
npz = np.load("merged.npz")
for name in ("w", "z64", "z128", "g/zc", "s"):
    values = [f[name][()] for f in ins]
    dtype = values[0].dtype
    stack = np.stack([np.asarray(v) for v in values])
    if dtype.kind == "c":  # each part as the engine averages floats: in double, rounded once
        part = np.float32 if dtype == np.complex64 else np.float64
        re = np.mean(stack.real.astype(np.float64), axis=0).astype(part)
        im = np.mean(stack.imag.astype(np.float64), axis=0).astype(part)
        want = np.empty(re.shape, dtype)
        want.real, want.imag = re, im
    else:
        want = np.mean(stack.astype(np.float64), axis=0).astype(dtype)
    for where, value in (("h5", got[name][()]), ("npz", npz[name])):
        value = np.asarray(value)
        assert value.dtype == dtype and value.shape == want.shape, (where, name, value.dtype, value.shape)
        assert value.tobytes() == want.tobytes(), (where, name, value, want)
    print(name, dtype, want.shape, "exact in .h5 and .npz")
assert got["g/zc"].chunks is not None  # the output keeps input 1's chunked dataset
PY
