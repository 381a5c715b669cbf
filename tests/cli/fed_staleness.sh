# FedAsync's staleness rule, the worked example: the base (0) is at round 3; client a (1) started from round 3,
# client b (1) from round 0, so tau = 0 and 3; polynomial:a=0.5 gives s = 1 and 4^-0.5 = 0.5, and --mix 0.9
# gives next = 0 + 0.9 / 2 * (1 * 1 + 0.5 * 1) = 0.675. hinge:a=1,b=1 gives s = 1 and 1 / (1 * (3 - 1) + 1) = 1/3:
# 0.9 / 2 * (1 + 1/3) = 0.6 (numpy computes it below, in the same order: sum, divide by K, times alpha).
P=/usr/bin/python3
$P "$ROOT/tests/cli/fed_make.py" base.h5 0 round=3
$P "$ROOT/tests/cli/fed_make.py" a.h5 1 round=3
$P "$ROOT/tests/cli/fed_make.py" b.h5 1 round=0
"$WAVG" merge a.h5 b.h5 --base base.h5 --staleness round --staleness-fn polynomial:a=0.5 --mix 0.9 -o poly.h5
"$WAVG" merge a.h5 b.h5 --base base.h5 --staleness round --staleness-fn hinge:a=1,b=1 --mix 0.9 -o hinge.h5 -q
$P - <<'PY'
import h5py, numpy as np
assert h5py.File("poly.h5", "r")["w"][()].tolist() == [0.675]
want = 0.0 + 0.9 * ((1.0 * 1.0 + (1 / (1 * (3 - 1) + 1)) * 1.0) / 2)
assert h5py.File("hinge.h5", "r")["w"][()].tolist() == [want], (h5py.File("hinge.h5", "r")["w"][()], want)
print("0.675 and", want)
PY
