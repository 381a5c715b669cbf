# A run folder of a CheckpointManager (numbered steps, each holding _CHECKPOINT_METADATA and its item in default/)
# merges with --last: the two newest steps (200: train_2, 300: train_3 of tests/orbax) average to
# 0.625 + L/8 + i/16 in float leaf L; optax's count is the newest step's (30), as --last keeps counters.
O=$ROOT/tests/orbax
for k in 1 2 3; do
  mkdir -p run/${k}00 && cp -r "$O"/train_$k run/${k}00/default && cp "$O"/train_$k/_CHECKPOINT_METADATA run/${k}00/
done
"$WAVG" merge -q --last 2 run -o avg/
"$WAVG" convert -q avg -o avg.safetensors
/usr/bin/python3 - <<'PY'
import json, struct
import numpy as np
raw = open("avg.safetensors", "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
leaf = 0
for entry in json.load(open("avg/_METADATA"))["tree_metadata"].values():
    name = "/".join(k["key"] for k in entry["key_metadata"])
    h = header.get(name)
    if not h:
        continue
    a, b = h["data_offsets"]
    v = np.frombuffer(raw[8 + n + a:8 + n + b], dtype={"F32": np.float32, "I32": np.int32, "I64": np.int64}[h["dtype"]])
    if h["dtype"] == "F32":
        assert np.array_equal(v, (0.625 + leaf / 8 + np.arange(v.size) / 16).astype(np.float32)), name
        leaf += 1
    else:
        print(name, v.tolist())
print(leaf, "float arrays the mean of steps 200 and 300")
PY
