# --perm-spec gives the permutation spec of a file without a model config (plain HDF5 written by h5py, float64 and
# float16 tensors, an optimizer slot): undoing a known permutation of the 5 hidden units returns the original
# bytes, and a spec whose group sizes disagree is refused with exit 3.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import json
import h5py
import numpy as np
rng = np.random.default_rng(9)
A = {"l1/w": rng.standard_normal((3, 5)), "l1/b": rng.standard_normal(5).astype(np.float16),
     "l2/w": rng.standard_normal((5, 2)), "l2/b": rng.standard_normal(2), "opt/l1/w/m": rng.standard_normal((3, 5))}
P = np.array([4, 2, 0, 1, 3])  # B's unit j is A's unit P[j]
B = {"l1/w": A["l1/w"][:, P], "l1/b": A["l1/b"][P], "l2/w": A["l2/w"][P], "l2/b": A["l2/b"],
     "opt/l1/w/m": A["opt/l1/w/m"][:, P]}
for path, w in (("a.h5", A), ("b.h5", B)):
    with h5py.File(path, "w") as f:
        for k, v in w.items():
            f[k] = v
spec = {"tensors": {"l1/w": [None, "hidden"], "l1/b": ["hidden"], "l2/w": ["hidden", None]},
        "slots": {"opt/l1/w/m": [None, "hidden"]}}
json.dump(spec, open("spec.json", "w"))
spec["tensors"]["l2/w"] = [None, "hidden"]  # 2 entries where l1/w has 5
json.dump(spec, open("bad.json", "w"))
PY
"$WAVG" align b.h5 --to a.h5 --perm-spec spec.json -o out.h5 --no-hash
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
with h5py.File("a.h5", "r") as a, h5py.File("out.h5", "r") as out:
    for k in ("l1/w", "l1/b", "l2/w", "l2/b", "opt/l1/w/m"):
        assert a[k].dtype == out[k].dtype and a[k][()].tobytes() == out[k][()].tobytes(), k
PY
"$WAVG" align b.h5 --to a.h5 --perm-spec bad.json -o bad.h5 2>&1 || echo "exit $?"
test ! -e bad.h5
