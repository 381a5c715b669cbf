# Orbax checkpoints written by orbax-checkpoint 0.12.8 (tests/orbax, make_orbax.py) in its three storage modes, one
# input each: OCDBT (train_1), per-leaf zarr v2 folders (zarr2_2) and per-leaf zarr v3 shards (zarr3_3), merge into an
# Orbax OCDBT folder. Read back through safetensors with numpy: float leaf L of the tree holds K/4 + L/8 + i/16 in
# input K, so the mean is 0.5 + L/8 + i/16, exact in float32; optax's count is input 1's (10), as the Flax codec's
# roles say; the folder holds only the files wavg writes.
O=$ROOT/tests/orbax
"$WAVG" merge -q "$O"/train_1 "$O"/zarr2_2 "$O"/zarr3_3 -o out/
ls out
"$WAVG" convert -q out -o out.safetensors
/usr/bin/python3 - <<'PY'
import json, struct
import numpy as np
raw = open("out.safetensors", "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
tree = json.load(open("out/_METADATA"))["tree_metadata"]
leaf = 0
for entry in tree.values():
    name = "/".join(k["key"] for k in entry["key_metadata"])
    if name not in header:
        print("not a tensor:", name)
        continue
    h = header[name]
    a, b = h["data_offsets"]
    v = np.frombuffer(raw[8 + n + a:8 + n + b], dtype={"F32": np.float32, "I32": np.int32, "I64": np.int64}[h["dtype"]])
    if h["dtype"] != "F32":
        print(name, h["dtype"], v.tolist())
        continue
    want = (0.5 + leaf / 8 + np.arange(v.size) / 16).astype(np.float32)
    assert np.array_equal(v, want), (name, v, want)
    leaf += 1
print(leaf, "float arrays the mean")
PY
