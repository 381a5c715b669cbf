# The issue's worked example: EMA with decay 0.9 over three one-number checkpoints 0, 10, 100 (oldest first) is
# 0.81 * 0 + 0.09 * 10 + 0.1 * 100 = 10.9, exactly float32(10.9) once rounded. Other files in the directory
# (log.csv, final.h5) carry no number and are left out; -v prints the sequence, newest first, and the weights.
P=/usr/bin/python3
mkdir run
$P - <<'PY'
import h5py, numpy as np
for n, v in ((1, 0.0), (2, 10.0), (3, 100.0)):
    with h5py.File(f"run/round-{n:04d}.h5", "w") as f:
        f["w"] = np.array([v], dtype=np.float32)
with h5py.File("run/final.h5", "w") as f:
    f["w"] = np.array([-1], dtype=np.float32)
open("run/log.csv", "w").write("round\n")
PY
"$WAVG" merge -v --last 3 run --schedule ema:0.9 -o ema.h5 2>&1 | grep -E "^wavg: (sequence|schedule)" |
  sed "s/weighs .*/weighs/"
$P - <<'PY'
import h5py, numpy as np
with h5py.File("ema.h5", "r") as f:
    got = f["w"][0]
    method = f.attrs["wavg_method"]
assert got == np.float32(10.9), repr(got)
print(got, method if isinstance(method, str) else method.decode())
PY
