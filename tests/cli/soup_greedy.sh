# The issue's worked example: one-number checkpoints 1, 2, 5, 9 under an evaluation that prints -(w - 3)^2.
# Scores -4, -1, -4, -36; sorted 2, 1, 5, 9 (1 before 5: ties keep command-line order). The soup starts from 2,
# rejects 1 (mean 1.5 scores -2.25 < -1), accepts 5 (mean 3.5 scores -0.25), rejects 9 (mean 16/3), so it is 3.5.
. "$ROOT/tests/support/one_number.sh"
one_number 1 2 5 9
"$WAVG" soup c1.h5 c2.h5 c5.h5 c9.h5 --eval "$P score.py {model} 2>/dev/null" -o soup.h5
$P - <<'PY'
import h5py
with h5py.File("soup.h5", "r") as f:
    print(f["w"][0], f.attrs["wavg_command"], f.attrs["wavg_method"])
PY
