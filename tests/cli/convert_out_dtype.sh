# convert --out-dtype rounds each floating-point value once to the new type (numpy's astype, which rounds to
# nearest even), copies integer tensors unchanged, and the round trip back to HDF5 keeps the rounded values.
"$WAVG" convert -q "$SAMPLES"/dtypes/a.h5 -o a16.safetensors --out-dtype float16
"$WAVG" convert -q a16.safetensors -o a16.h5
"$WAVG" convert -q "$SAMPLES"/mlp/node1.h5 -o n1.safetensors
"$WAVG" convert -q "$SAMPLES"/mlp/node1.h5 -o n1f16.h5 --out-dtype float16
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$SAMPLES" <<'PY'
import sys
import h5py
import numpy as np
import safetensors_tools as st
samples = sys.argv[1]
meta, got = st.load("a16.safetensors")
assert meta["wavg_out_dtype"] == "float16"
with h5py.File(f"{samples}/dtypes/a.h5", "r") as src, h5py.File("a16.h5", "r") as back:
    for name, g in got.items():
        x = src[name][()]
        want = x.astype(np.float16) if x.dtype.kind == "f" else x
        assert g.dtype == want.dtype and g.tobytes() == np.asarray(want).tobytes(), name
        assert np.asarray(back[name][()]).tobytes() == np.asarray(want).tobytes(), name
_, n1 = st.load("n1.safetensors")
with h5py.File(f"{samples}/mlp/node1.h5", "r") as src:
    for name, g in n1.items():
        assert np.asarray(src[name][()]).tobytes() == g.tobytes(), name
# HDF5 to HDF5 with a new dtype: Keras structure kept, float datasets retyped, the int64 counter unchanged.
with h5py.File(f"{samples}/mlp/node1.h5", "r") as src, h5py.File("n1f16.h5", "r") as out:
    assert list(out["model_weights"].attrs["layer_names"]) == list(src["model_weights"].attrs["layer_names"])
    def check(name, x):
        if isinstance(x, h5py.Dataset):
            v = x[()]
            want = v.astype(np.float16) if v.dtype.kind == "f" else v
            got = out[name][()]
            assert got.dtype == want.dtype and np.asarray(got).tobytes() == np.asarray(want).tobytes(), name
    src.visititems(check)
print("ok")
PY
