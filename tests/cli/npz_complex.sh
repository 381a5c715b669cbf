# complex64 and complex128 arrays as numpy.savez and savez_compressed write them ('<c8', '<c16'), a scalar among
# them, beside a float32 one: inspect shows them as such; a merge of three averages the real and imaginary parts
# element-wise (each numpy's float64 mean, rounded once to the part's type) into an .npz numpy reads back as
# complex, and a convert to .h5 gives h5py's complex type with the same values. Once they were refused by name.
/usr/bin/python3 - <<'PY'
import numpy as np
rng = np.random.default_rng(391)
def c(shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
for i in range(3):
    arrays = {"w": rng.standard_normal(3).astype(np.float32), "z64": c((2, 2), np.complex64),
              "z128": c((3,), np.complex128), "s": np.complex128(0.5 + 1j * i)}
    (np.savez_compressed if i == 1 else np.savez)(f"in{i}.npz", **arrays)
PY
"$WAVG" inspect in0.npz
"$WAVG" merge -q in0.npz in1.npz in2.npz -o merged.npz
"$WAVG" convert -q merged.npz -o merged.h5
/usr/bin/python3 - <<'PY'
import numpy as np
ins = [np.load(f"in{i}.npz") for i in range(3)]
got = np.load("merged.npz")
try:
    import h5py
    h5 = h5py.File("merged.h5", "r")
except ImportError:
    h5 = None
for name in ("w", "z64", "z128", "s"):
    stack = np.stack([f[name] for f in ins])
    dtype = stack.dtype
    if dtype.kind == "c":
        part = np.float32 if dtype == np.complex64 else np.float64
        want = np.empty(stack.shape[1:], dtype)
        want.real = np.mean(stack.real.astype(np.float64), axis=0).astype(part)
        want.imag = np.mean(stack.imag.astype(np.float64), axis=0).astype(part)
    else:
        want = np.mean(stack.astype(np.float64), axis=0).astype(dtype)
    for value in [got[name]] + ([np.asarray(h5[name][()])] if h5 else [want]):
        assert value.dtype == dtype and value.shape == want.shape, (name, value.dtype, value.shape)
        assert value.tobytes() == want.tobytes(), (name, value, want)
    print(name, dtype, want.shape, "exact")
PY
