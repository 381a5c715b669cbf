# Keras 3 keeps a layer's sub-objects under groups named after the attribute that holds them (layers/lstm/cell/vars,
# layers/multi_head_attention/query_dense/vars), beside an empty vars/ of the layer itself. Written here with h5py,
# filled with 1 in one file and 2 in the other: merge averages every one of them (1.5), convert keeps them all,
# inspect lists them.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
for name, v in (("a.weights.h5", 1), ("b.weights.h5", 2)):
    with h5py.File(name, "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.full((2, 3), v, np.float32))
        f.create_dataset("layers/lstm/cell/vars/0", data=np.full((3, 4), v, np.float32))
        f.create_dataset("layers/multi_head_attention/query_dense/vars/0", data=np.full((3, 2, 2), v, np.float32))
        f.create_group("layers/lstm/vars")
        f.create_group("layers/multi_head_attention/vars")
        f.create_group("vars")
PY
"$WAVG" merge -q a.weights.h5 b.weights.h5 -o avg.weights.h5
"$WAVG" convert -q a.weights.h5 -o a.safetensors
"$WAVG" inspect a.weights.h5 | grep -c '^layers/'
/usr/bin/python3 - <<'PY'
import json, struct, h5py, numpy as np
names = []
with h5py.File("avg.weights.h5", "r") as f:
    f.visititems(lambda n, x: names.append(n) if isinstance(x, h5py.Dataset) else None)
    for n in names:
        assert np.all(f[n][()] == 1.5), n
print(len(names), "datasets averaged")
header = open("a.safetensors", "rb").read()
size = struct.unpack("<Q", header[:8])[0]
print(sorted(k for k in json.loads(header[8:8 + size]) if k != "__metadata__"))
PY
