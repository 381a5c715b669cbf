# NumPy archives storing one tensor as float16 (input 1), float64 and float32: the mean of their exact values is
# written as float16, rounded once (the exact mean by Python's fractions, rounded to nearest even here). A tensor
# stored as float in input 1 and as an integer in another is still refused (exit 3), saying why.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "python3-numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import numpy as np
np.savez("n1.npz", w=np.array([0.5, -1.25, 3.0, 1000.0], dtype=np.float16))
np.savez("n2.npz", w=np.array([0.1, 2.0, 1.0 / 3, -7.5], dtype=np.float64))
np.savez("n3.npz", w=np.array([0.2, 0.3, 4.0, 1e-3], dtype=np.float32))
np.savez("n4.npz", w=np.array([1, 2, 3, 4], dtype=np.int32))
PY
"$WAVG" merge -q n1.npz n2.npz n3.npz -o mean.npz
"$WAVG" merge -q n1.npz n4.npz -o int.npz || echo "n4.npz: exit $?"
[ ! -e int.npz ] || { echo "an output was written"; exit 1; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
from fractions import Fraction
import numpy as np
from exact_rounding import rounded
ins = [np.load(f"n{k}.npz")["w"] for k in (1, 2, 3)]
want = np.array([float(rounded(sum(Fraction(float(v)) for v in vals) / 3, 11)) for vals in zip(*ins)], dtype=np.float16)
got = np.load("mean.npz")["w"]
assert got.dtype == np.float16 and np.array_equal(got, want), (got, want)
print("float16: the exact mean rounded once")
PY
