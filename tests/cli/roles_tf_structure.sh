# Roles from a TensorFlow checkpoint's structure, not from names (samples/roles/make_structure.py, TensorFlow 2.21):
# a TF2 tf.Module holding a weight w and an int64 variable named iter is no optimizer (w is averaged, not copied from
# input 1 as a hyper-parameter); a TF1 EMA shadow (dense/kernel/ExponentialMovingAverage, named like a slot) is
# averaged like the weights and untouched by --optimizer-state first / drop, which act on the Momentum slot only.
# Expected values: numpy means (float64, rounded once to float32) of what TensorFlow's own reader gives
# (structure_values.json).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
R=$SAMPLES/roles
"$WAVG" merge "$R/iter_a/ckpt" "$R/iter_b/ckpt" -o iter.json -q
"$WAVG" merge "$R/ema_a/model.ckpt" "$R/ema_b/model.ckpt" -o ema.json -q
"$WAVG" merge "$R/ema_a/model.ckpt" "$R/ema_b/model.ckpt" -o first.json -q --optimizer-state first
"$WAVG" merge "$R/ema_a/model.ckpt" "$R/ema_b/model.ckpt" -o drop.json -q --optimizer-state drop
/usr/bin/python3 - "$R/structure_values.json" <<'PY'
import json, sys
import numpy as np
values = json.load(open(sys.argv[1]))

def got(path):
    return {t["name"]: np.array(t["data"]) for t in json.load(open(path))["tensors"]}

def mean(a, b, name):
    x, y = (np.array(values[p][name], np.float32).astype(np.float64) for p in (a, b))
    return ((x + y) / 2).astype(np.float32)

def check(out, name, want):
    assert np.array_equal(out[name].astype(want.dtype).reshape(-1), want.reshape(-1)), (name, out[name], want)

out = got("iter.json")
w, it = "model/w/.ATTRIBUTES/VARIABLE_VALUE", "model/iter/.ATTRIBUTES/VARIABLE_VALUE"
check(out, w, mean("iter_a/ckpt", "iter_b/ckpt", w))
check(out, it, np.array(values["iter_a/ckpt"][it], np.int64))
print("tf.Module with a variable named iter: w averaged, iter input 1's")

a, b = "ema_a/model.ckpt", "ema_b/model.ckpt"
k, ema, slot = "dense/kernel", "dense/kernel/ExponentialMovingAverage", "dense/kernel/Momentum"
for path, slot_want in (("ema.json", mean(a, b, slot)), ("first.json", np.array(values[a][slot], np.float32)),
                        ("drop.json", None)):
    out = got(path)
    check(out, k, mean(a, b, k))
    check(out, ema, mean(a, b, ema))
    if slot_want is None:
        assert slot not in out, sorted(out)
    else:
        check(out, slot, slot_want)
    print(path + ": EMA averaged, Momentum slot " + ("left out" if slot_want is None else "as expected"))
PY
