# The issue's worked example: one-number checkpoints 1, 2, 5, 9 under an evaluation that prints -(w - 3)^2.
# Scores -4, -1, -4, -36; sorted 2, 1, 5, 9 (1 before 5: ties keep command-line order). The soup starts from 2,
# rejects 1 (mean 1.5 scores -2.25 < -1), accepts 5 (mean 3.5 scores -0.25), rejects 9 (mean 16/3), so it is 3.5.
P=/usr/bin/python3
$P - <<'PY'
import h5py, numpy as np
for v in (1, 2, 5, 9):
    with h5py.File(f"c{v}.h5", "w") as f:
        f["w"] = np.array([v], dtype=np.float64)
PY
cat > score.py <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    w = f["w"][0]
print("evaluating", file=sys.stderr)
print(-(w - 3) ** 2)
PY
"$WAVG" soup c1.h5 c2.h5 c5.h5 c9.h5 --eval "$P score.py {model} 2>/dev/null" -o soup.h5
$P - <<'PY'
import h5py
with h5py.File("soup.h5", "r") as f:
    print(f["w"][0], f.attrs["wavg_command"], f.attrs["wavg_method"])
PY
