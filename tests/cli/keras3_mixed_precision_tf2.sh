# Keras 3 mixed precision in TF2 checkpoints (samples/keras3/lso_{a,b,c}_tf2/ckpt, written by TensorFlow 2.21 /
# Keras 3.15.1 with tf.train.Checkpoint(model, optimizer): LossScaleOptimizer(Adam(learning_rate=0.01, 0.02, 0.03)),
# loss scales 32768, 32768, 16384). The object graph holds the inner optimizer as the wrapper's child: a merge once
# took it for the wrapper's state and averaged its learning rate (0.02) and the loss scale (27306.67, no power of
# two). Now the learning rates, the loss scale, the step and iteration counters are input 1's; the moments the mean,
# input 1's under --optimizer-state first. Expected values from the inputs by tf_bundle.py (no TensorFlow); with
# WAVG_TF_PYTHON (a python with TensorFlow and Keras 3) TensorFlow restores the result into the same model.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
K=$SAMPLES/keras3
mkdir mean first
"$WAVG" merge -q "$K"/lso_a_tf2/ckpt "$K"/lso_b_tf2/ckpt "$K"/lso_c_tf2/ckpt -o mean/ckpt
"$WAVG" merge -q "$K"/lso_a_tf2/ckpt "$K"/lso_b_tf2/ckpt "$K"/lso_c_tf2/ckpt -o first/ckpt --optimizer-state first
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$K" <<'PY'
import sys
import numpy as np
from tf_bundle import read_checkpoint
values = lambda prefix: {k: v[2] for k, v in read_checkpoint(prefix).items() if not isinstance(v[2], bytes)}
inputs = [values(f"{sys.argv[1]}/lso_{k}_tf2/ckpt") for k in "abc"]
a = inputs[0]
key = lambda path: f"optimizer/{path}/.ATTRIBUTES/VARIABLE_VALUE"
rate, scale = key("inner_optimizer/_learning_rate"), key("dynamic_scale")
print("inputs: learning rates", [f"{w[rate]:.6g}" for w in inputs], "loss scales", [f"{w[scale]:g}" for w in inputs])
kept = {key(p) for p in ("_iterations", "_learning_rate", "step_counter", "dynamic_scale", "inner_optimizer/_iterations",
                         "inner_optimizer/_learning_rate")}
moments = {key(f"inner_optimizer/_variables/{n}") for n in range(2, 6)}
mean = lambda name: (sum(w[name].astype(np.float64) for w in inputs) / 3).astype(a[name].dtype)
for case, moment in (("mean", mean), ("first", lambda name: a[name])):
    out = values(case + "/ckpt")
    assert set(a) <= set(out), set(a) - set(out)
    for name in a:
        want = a[name] if name in kept else moment(name) if name in moments else mean(name)
        assert out[name].dtype == a[name].dtype and np.array_equal(out[name], want), (case, name, out[name], want)
    print(case, f"learning rate {out[rate]:.6g}", f"loss scale {out[scale]:g}")
PY
if [ -n "${WAVG_TF_PYTHON:-}" ]; then
  KERAS_BACKEND=tensorflow TF_CPP_MIN_LOG_LEVEL=3 "$WAVG_TF_PYTHON" - <<'PY' >/dev/null 2>&1 || echo "tensorflow check failed"
import keras
import numpy as np
import tensorflow as tf
keras.mixed_precision.set_global_policy("mixed_float16")
model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Activation("linear", dtype="float32")])
optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(learning_rate=0.5))
model.compile(optimizer=optimizer, loss="mse")
optimizer.build(model.trainable_variables)
tf.train.Checkpoint(model=model, optimizer=optimizer).read("first/ckpt").assert_existing_objects_matched()
assert np.float32(optimizer.inner_optimizer.learning_rate.numpy()) == np.float32(0.01)
assert float(optimizer.dynamic_scale.numpy()) == 32768.0
PY
fi
