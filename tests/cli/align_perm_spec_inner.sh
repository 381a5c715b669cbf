# --perm-spec's "inner": an axis that repeats each unit over consecutive entries (PyTorch's channels-first Flatten:
# entry u * 3 + s is unit u at position s), beside "outer" (channels last: entry s * 4 + u). The test permutes the
# 4 hidden units of A itself, so that B computes what A computes; aligning B back must return A byte for byte.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import json
import h5py
import numpy as np
rng = np.random.default_rng(4)
A = {"l1/w": rng.standard_normal((5, 4)), "l1/b": rng.standard_normal(4),
     "first/w": rng.standard_normal((12, 2)), "last/w": rng.standard_normal((12, 2))}
P = np.array([2, 0, 3, 1])  # B's unit j is A's unit P[j]
inner = (P[:, None] * 3 + np.arange(3)[None, :]).reshape(-1)
outer = (np.arange(3)[:, None] * 4 + P[None, :]).reshape(-1)
B = {"l1/w": A["l1/w"][:, P], "l1/b": A["l1/b"][P], "first/w": A["first/w"][inner], "last/w": A["last/w"][outer]}
x = rng.standard_normal((6, 5))
def f(w):  # unit u's activation spread over 3 positions, flattened channels first and channels last
    h = np.maximum(x @ w["l1/w"] + w["l1/b"], 0)
    return np.repeat(h, 3, axis=1) @ w["first/w"] + np.tile(h, 3) @ w["last/w"]
assert np.allclose(f(A), f(B))
for path, w in (("a.h5", A), ("b.h5", B)):
    with h5py.File(path, "w") as h:
        for k, v in w.items():
            h[k] = v
json.dump({"tensors": {"l1/w": [None, "h"], "l1/b": ["h"], "first/w": [{"group": "h", "inner": 3}, None],
                       "last/w": [{"group": "h", "outer": 3}, None]}}, open("spec.json", "w"))
PY
"$WAVG" align b.h5 --to a.h5 --perm-spec spec.json -o out.h5 --no-hash -q
/usr/bin/python3 - <<'PY'
import h5py
with h5py.File("a.h5", "r") as a, h5py.File("out.h5", "r") as out:
    for k in ("l1/w", "l1/b", "first/w", "last/w"):
        assert a[k][()].tobytes() == out[k][()].tobytes(), k
print("recovered")
PY
