# Keras 3 mixed precision (samples/keras3/lso_{a,b,c}.keras, written by Keras 3.15.1: mixed_float16 and
# LossScaleOptimizer(Adam(learning_rate=0.01, 0.02, 0.03)), loss scales 32768, 32768, 16384). The wrapper lists its
# own variables (optimizer/vars/0..3: iterations, its unused learning rate, step_counter, dynamic_scale) and then
# the inner Adam's (vars/4..9), which optimizer/inner_optimizer/vars/0..5 hold again. A merge once averaged the
# inner learning rate (0.02), the loss scale (27306.67, no power of two) and, under --optimizer-state first, still
# the inner list's moments. Now the rates, counters and the loss scale are input 1's, the moments the mean (input
# 1's under --optimizer-state first), both copies alike; --int-policy equal refuses the differing rates. Expected
# values by h5py and numpy from the inputs; with WAVG_KERAS_PYTHON (a python with Keras 3) Keras loads the result.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "python3-h5py missing"; exit 77; }
K=$SAMPLES/keras3
"$WAVG" merge -q "$K"/lso_a.keras "$K"/lso_b.keras "$K"/lso_c.keras -o mean.keras
"$WAVG" merge -q "$K"/lso_a.keras "$K"/lso_b.keras "$K"/lso_c.keras -o first.keras --optimizer-state first
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$K" <<'PY'
import io
import sys
import zipfile
import numpy as np
from h5_tools import datasets
def weights(path):
    with zipfile.ZipFile(path) as z:
        return datasets(io.BytesIO(z.read("model.weights.h5")))
inputs = [weights(f"{sys.argv[1]}/lso_{k}.keras") for k in "abc"]
a = inputs[0]
print("inputs: learning rates", [f'{w["optimizer/inner_optimizer/vars/1"]:.6g}' for w in inputs],
      "loss scales", [f'{w["optimizer/vars/3"]:g}' for w in inputs])
mean = lambda name: (sum(w[name].astype(np.float64) for w in inputs) / 3).astype(a[name].dtype)
kept = {f"optimizer/vars/{n}" for n in range(6)} | {"optimizer/inner_optimizer/vars/0",
                                                    "optimizer/inner_optimizer/vars/1"}
moments = {f"optimizer/vars/{n}" for n in range(6, 10)} | {f"optimizer/inner_optimizer/vars/{n}" for n in range(2, 6)}
for case, moment in (("mean.keras", mean), ("first.keras", lambda name: a[name])):
    out = weights(case)
    assert sorted(out) == sorted(a), sorted(out)
    for name, got in out.items():
        want = a[name] if name in kept else moment(name) if name in moments else mean(name)
        assert got.dtype == a[name].dtype and np.array_equal(got, want), (case, name, got, want)
    for n in range(6):  # the wrapper's copy of the inner list and the inner list itself agree
        assert np.array_equal(out[f"optimizer/vars/{n + 4}"], out[f"optimizer/inner_optimizer/vars/{n}"]), n
    print(case, f'learning rate {out["optimizer/inner_optimizer/vars/1"]:.6g}',
          f'loss scale {out["optimizer/vars/3"]:g}', "step counter", out["optimizer/vars/2"])
PY
"$WAVG" merge "$K"/lso_a.keras "$K"/lso_b.keras "$K"/lso_c.keras -o equal.keras --int-policy equal 2>&1 |
  sed "s|$K/||g" | grep "vars/5:\|inner_optimizer/vars/1:"
test ! -e equal.keras && echo "--int-policy equal: refused"
if [ -n "${WAVG_KERAS_PYTHON:-}" ]; then
  "$WAVG_KERAS_PYTHON" - <<'PY' >/dev/null 2>&1 || echo "keras check failed"
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import keras
m = keras.saving.load_model("first.keras")
import numpy as np
assert np.float32(m.optimizer.inner_optimizer.learning_rate) == np.float32(0.01)
assert float(m.optimizer.dynamic_scale) == 32768.0
PY
fi
