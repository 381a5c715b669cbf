# Sourced by CLI cases about evaluation-driven merges (soup, merge --eval): one_number V... writes cV.h5 holding
# the float64 dataset w = [V] for each V, and score.py prints the score -(w - 3)^2 of the checkpoint it is given
# (after a line on standard error, which the score must not be taken from).
P=/usr/bin/python3
$P -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
one_number() {
  $P - "$@" <<'PY'
import sys, h5py, numpy as np
for v in sys.argv[1:]:
    with h5py.File(f"c{v}.h5", "w") as f:
        f["w"] = np.array([float(v)], dtype=np.float64)
PY
}
cat > score.py <<'PY'
import sys, h5py
with h5py.File(sys.argv[1], "r") as f:
    w = f["w"][0]
print("evaluating", file=sys.stderr)
print(-(w - 3) ** 2)
PY
