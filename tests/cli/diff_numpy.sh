# wavg diff --json against numpy: every tensor's L2 distance, relative distance, cosine and largest difference,
# and the totals, computed by numpy in float64 from the same files read with h5py.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "no h5py/numpy"; exit 77; }
"$WAVG" diff --json "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node3.h5" > diff.json
/usr/bin/python3 - "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node3.h5" <<'PY'
import json, sys, h5py, numpy as np
out = json.load(open("diff.json"))
fa, fb = h5py.File(sys.argv[1], "r"), h5py.File(sys.argv[2], "r")
def close(x, y): return abs(x - y) <= 1e-12 * max(1.0, abs(y))
va, vb = [], []
for t in out["tensors"]:
    a = np.asarray(fa[t["name"]], dtype=np.float64).ravel(); b = np.asarray(fb[t["name"]], dtype=np.float64).ravel()
    if t["dtype"].startswith("float"):
        assert close(t["l2"], np.linalg.norm(a - b)), t
        assert close(t["relative"], np.linalg.norm(a - b) / np.linalg.norm(a)), t
        assert close(t["cosine"], a @ b / (np.linalg.norm(a) * np.linalg.norm(b))), t
        assert t["max_abs"] == np.max(np.abs(a - b)), t
        va.append(a); vb.append(b)
    else:
        assert t["differing"] == int(np.sum(a != b)), t
a, b = np.concatenate(va), np.concatenate(vb)
tot = out["total"]
assert tot["values"] == a.size
assert close(tot["l2"], np.linalg.norm(a - b)) and close(tot["cosine"], a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
print("ok", len(out["tensors"]), "tensors")
PY
