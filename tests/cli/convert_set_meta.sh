# convert --set-meta KEY=VALUE writes file-level metadata where wavg reads it (--weight-by, --staleness), with no
# Python: read back here by h5py (HDF5 root attributes), by parsing the safetensors header (__metadata__), the .pt
# archive's wavg.json (zipfile), the TF.js model.json (userDefinedMetadata) and the wavg JSON "metadata" member;
# then merge --weight-by num_examples of three clients so labelled equals numpy's weighted mean.
/usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null || { echo "no numpy/h5py"; exit 77; }
n=(0 600 200 200)
for i in 1 2 3; do
  "$WAVG" convert -q "$SAMPLES/mlp/node$i.h5" -o c$i.h5 --set-meta num_examples=${n[$i]} --set-meta round=3
  "$WAVG" convert -q c$i.h5 -o c$i.safetensors --set-meta num_examples=${n[$i]}
done
"$WAVG" convert -q "$SAMPLES/mlp/node1.h5" -o c1.pt --set-meta num_examples=600 --set-meta 'note=a b=c'
mkdir tf
"$WAVG" convert -q c1.safetensors --format tfjs -o tf/model.json --exclude 'optimizer*' --set-meta num_examples=600
"$WAVG" convert -q c1.h5 -o c1.json --set-meta num_examples=700
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json, zipfile, h5py
import safetensors_tools as st
for i, n in ((1, 600), (2, 200), (3, 200)):
    with h5py.File(f"c{i}.h5", "r") as f:
        attrs = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f.attrs.items()}
    assert attrs["num_examples"] == str(n) and attrs["round"] == "3", attrs
    meta, _ = st.load(f"c{i}.safetensors")
    assert meta["num_examples"] == str(n), meta
    # convert does not carry input 1's other keys into a safetensors file's metadata unless it has them.
with zipfile.ZipFile("c1.pt") as z:
    (name,) = [m for m in z.namelist() if m.endswith("/wavg.json")]
    meta = json.loads(z.read(name))
assert meta["num_examples"] == "600" and meta["note"] == "a b=c", meta
udm = json.load(open("tf/model.json"))["userDefinedMetadata"]
assert udm["wavg"]["num_examples"] == "600", udm
assert json.load(open("c1.json"))["metadata"]["num_examples"] == "700"
print("metadata read back: HDF5, safetensors, PyTorch, TF.js, wavg JSON")
PY
"$WAVG" merge -q c1.h5 c2.h5 c3.h5 --weight-by num_examples -o fed.h5
"$WAVG" merge -q c1.safetensors c2.safetensors c3.safetensors --weight-by num_examples -o fed.safetensors
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$SAMPLES/mlp" <<'PY'
import sys, numpy as np
import safetensors_tools as st
from h5_tools import datasets
ins = [datasets(f"{sys.argv[1]}/node{i}.h5") for i in (1, 2, 3)]
w = np.array([600, 200, 200], np.float64) / 1000
got_h5, got_st = datasets("fed.h5"), st.load("fed.safetensors")[1]
n = 0
for name, a in ins[0].items():
    if "optimizer" in name or a.dtype.kind != "f":
        continue
    want = sum(wi * x[name].astype(np.float64) for wi, x in zip(w, ins)).astype(a.dtype)
    assert np.allclose(got_h5[name], want, rtol=1e-6, atol=1e-7), name
    assert np.allclose(got_st[name], want, rtol=1e-6, atol=1e-7), name
    n += 1
print(n, "tensors: the 600/200/200 weighted mean, from HDF5 and from safetensors")
PY
