# Issue 25: checkpoints written by TensorFlow 2.21 / Keras 3.15 (samples/roles/make_roles.py): a Keras 3 model with
# a Dense layer and a layer holding one scalar weight, compiled with Adam and fitted from two seeds, saved as .keras
# and through tf.train.CheckpointManager (whose keys put every weight under optimizer/_trainable_variables/), and a
# TF1 Adam graph saved by Saver (beta1_power and beta2_power are counters). Every variable must come out as the
# framework-side expectation in samples/roles/expected.json says: counters and hyper-parameters input 1's, all else
# (the scalar weight and its Adam moments included) the mean. The merged .keras loads in Keras when
# WAVG_KERAS_PYTHON names a Python with Keras 3.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
R=$SAMPLES/roles
"$WAVG" merge "$R/a.keras" "$R/b.keras" -o keras.json -v 2>&1 | grep "^wavg: averaged:"
"$WAVG" merge "$R/tf2_a/ckpt-1" "$R/tf2_b/ckpt-1" -o tf2.json -v 2>&1 | grep "^wavg: averaged:"
"$WAVG" merge "$R/tf1_a/model.ckpt-2" "$R/tf1_b/model.ckpt-5" -o tf1.json -v 2>&1 | grep "^wavg: averaged:"
/usr/bin/python3 - "$R/expected.json" <<'PY'
import json, sys
import numpy as np
expected = json.load(open(sys.argv[1]))
for case in ("keras", "tf2", "tf1"):
    got = {t["name"]: t for t in json.load(open(case + ".json"))["tensors"]}
    for name, want in expected[case].items():
        t = got[name]
        v = np.array(t["data"], dtype=np.float64 if "float" in t["dtype"] else np.int64).reshape(-1)
        w = np.array(want["value"]).reshape(-1)
        if "float" in t["dtype"]:
            v, w = v.astype(np.float32), w.astype(np.float32)
        assert np.array_equal(v, w.astype(v.dtype)), (case, name, v, w)
    print(case, len(expected[case]), "variables as expected")
PY
"$WAVG" inspect "$R/tf2_a/ckpt-1" |
  grep -E "trainable_variables/2|_variables/6|_iterations|_learning_rate|save_counter" |
  awk '{print $1, $4}'
if [ -n "${WAVG_KERAS_PYTHON:-}" ]; then
  "$WAVG" merge "$R/a.keras" "$R/b.keras" -o half.keras --out-dtype float16 -q
  "$WAVG_KERAS_PYTHON" - "$R" <<'PY' >/dev/null 2>&1 || echo "keras check failed"
import os, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
sys.path.insert(0, sys.argv[1])
import keras
from make_roles import Temperature
m = keras.saving.load_model("half.keras")
assert m.layers[0].kernel.dtype == "float16", m.layers[0].kernel.dtype
assert str(m.optimizer.learning_rate.dtype) == "float32"
PY
fi
