# --include / --exclude: a PyTorch-style safetensors file (written here with numpy) holding an int64 batch-norm
# counter cannot go to TF.js (no int64 there), and the refusal names the --exclude that leaves it out; -v names what was left out,
# and Python reads the TF.js weights back equal to numpy's. Then merges of Keras 2 HDF5 files with --exclude and
# --include into safetensors: the output has exactly the kept tensors, each numpy's mean; `check` with everything
# excluded is an error.
/usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null || { echo "no numpy/h5py"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
t = {"fc.weight": np.arange(6, dtype=np.float32).reshape(2, 3), "fc.bias": np.array([0.5, -1.5], np.float32),
     "bn.num_batches_tracked": np.array(7, np.int64)}
hdr, data = {}, b""
for k, v in t.items():
    hdr[k] = {"dtype": {"float32": "F32", "int64": "I64"}[str(v.dtype)], "shape": list(v.shape),
              "data_offsets": [len(data), len(data) + v.nbytes]}
    data += v.tobytes()
h = json.dumps(hdr).encode()
open("model.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
mkdir tf
cp "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" .
set +e
"$WAVG" convert -q model.safetensors --format tfjs -o tf/model.json
echo "without --exclude: exit $?, $(ls tf | wc -l) files"
set -e
# The refusal's hint, followed as printed:
"$WAVG" convert -v model.safetensors --format tfjs --exclude 'bn.num_batches_tracked' -o tf/model.json 2>verbose.txt
grep '^wavg: left out' verbose.txt
/usr/bin/python3 - <<'PY'
import json, numpy as np
m = json.load(open("tf/model.json"))
(g,) = m["weightsManifest"]
buf = b"".join(open("tf/" + p, "rb").read() for p in g["paths"])
assert [w["name"] for w in g["weights"]] == ["fc.weight", "fc.bias"], g["weights"]
assert all(w["dtype"] == "float32" for w in g["weights"])
got = np.frombuffer(buf, np.float32)
assert got.tobytes() == np.concatenate([np.arange(6, dtype=np.float32), [0.5, -1.5]]).astype(np.float32).tobytes()
print("TF.js weights equal numpy's")
PY
"$WAVG" merge -q node1.h5 node2.h5 --exclude '*optimizer*' --exclude '*/bias:0' \
  -o avg.safetensors
"$WAVG" merge -q node1.h5 node2.h5 --include '*dense_1/kernel*' -o one.safetensors
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - . <<'PY'
import sys, h5py, numpy as np
import safetensors_tools as st
from h5_tools import datasets
d = sys.argv[1]
a, b = datasets(f"{d}/node1.h5"), datasets(f"{d}/node2.h5")
for path, keep in (("avg.safetensors", lambda n: "optimizer" not in n and not n.endswith("/bias:0")),
                   ("one.safetensors", lambda n: "dense_1/kernel" in n)):
    got = st.load(path)[1]
    want = sorted(n for n in a if keep(n))
    assert sorted(got) == want, (path, sorted(got))
    for n in want:
        mean = ((a[n].astype(np.float64) + b[n].astype(np.float64)) / 2).astype(a[n].dtype)
        assert got[n].tobytes() == mean.tobytes(), n
    print(path, len(want), "tensors, each numpy's mean")
PY
set +e
"$WAVG" check node1.h5 node2.h5 --exclude '*'
echo "everything excluded: exit $?"
