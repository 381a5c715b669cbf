# Keras 3 Nadam's u_product (samples/keras3/nadam_*.keras, written by Keras 3.15.1: optimizer/vars/6, the running
# product of the momentum schedule, a function of the step as torch's NAdam mu_product is) is a counter, like the
# iteration count (vars/0): a merge keeps input 1's (0.468 after 1 step) where it once averaged them with input 2's
# (0.114 after 3 steps) into a product no run reached. The weights and Nadam's slots are the mean, the learning rate
# input 1's. Expected values by h5py and numpy from the inputs.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "python3-h5py missing"; exit 77; }
"$WAVG" merge -q "$SAMPLES"/keras3/nadam_a.keras "$SAMPLES"/keras3/nadam_b.keras -o out.keras
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$SAMPLES"/keras3 <<'PY'
import io
import sys
import zipfile
import numpy as np
from h5_tools import datasets
def weights(path):
    with zipfile.ZipFile(path) as z:
        return datasets(io.BytesIO(z.read("model.weights.h5")))
a, b = weights(sys.argv[1] + "/nadam_a.keras"), weights(sys.argv[1] + "/nadam_b.keras")
out = weights("out.keras")
assert sorted(out) == sorted(a), sorted(out)
kept = {"optimizer/vars/0", "optimizer/vars/1", "optimizer/vars/6"}  # iterations, learning rate, u_product
for name, got in out.items():
    want = a[name] if name in kept else ((a[name].astype(np.float64) + b[name]) / 2).astype(a[name].dtype)
    assert got.dtype == a[name].dtype and np.array_equal(got, want), (name, got, want)
assert a["optimizer/vars/6"] != b["optimizer/vars/6"]
print("u_product and iterations: input 1's; the rest the mean")
PY
