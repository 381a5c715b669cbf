# numpy.savez keeps a key's colon ("dense/kernel:0", as Keras names variables) in the member name
# (dense/kernel:0.npy), and wavg reads and writes such names: two files numpy wrote merge, numpy reads the output
# (values: numpy's float64 mean rounded to float32), and a safetensors file of such names converts to an .npz that
# numpy reads back. A member name that starts like a Windows drive ("C:") is still refused, and so is writing one
# with "..": nothing is written.
/usr/bin/python3 - <<'PY'
import numpy as np
for k, s in (("a", 1.0), ("b", 3.0)):
    np.savez(f"{k}.npz", **{"dense/kernel:0": np.arange(6, dtype=np.float32).reshape(2, 3) * s,
                            "dense/bias:0": np.full(3, s, dtype=np.float32)})
np.savez("drive.npz", **{"C:evil": np.zeros(2, dtype=np.float32)})
PY
"$WAVG" merge -q a.npz b.npz -o avg.npz
"$WAVG" convert -q avg.npz -o avg.safetensors
"$WAVG" convert -q avg.safetensors -o back.npz
/usr/bin/python3 - <<'PY'
import numpy as np
a, b = np.load("a.npz"), np.load("b.npz")
for out in ("avg.npz", "back.npz"):
    got = np.load(out)
    assert sorted(got.files) == sorted(a.files), got.files
    for k in a.files:
        want = ((a[k].astype(np.float64) + b[k].astype(np.float64)) / 2).astype(np.float32)
        assert got[k].dtype == np.float32 and np.array_equal(got[k], want), (out, k)
    print(out, sorted(got.files))
PY
"$WAVG" inspect drive.npz >/dev/null || echo "drive: exit $?"
# A tensor name that would make such a member is refused when writing, naming it; nothing is written.
/usr/bin/python3 - <<'PY'
import json, struct
h = {"../evil": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}
t = json.dumps(h).encode()
t += b" " * ((8 - len(t) % 8) % 8)
open("dotdot.safetensors", "wb").write(struct.pack("<Q", len(t)) + t + bytes(4))
PY
"$WAVG" convert -q dotdot.safetensors -o dotdot.npz || echo "dotdot: exit $?"
[ ! -e dotdot.npz ]
