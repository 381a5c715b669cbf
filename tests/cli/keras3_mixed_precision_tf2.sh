# Keras 3 mixed precision in TF2 checkpoints (samples/keras3/lso_{a,b,c}_tf2/ckpt, written by TensorFlow 2.21 /
# Keras 3.15.1 with tf.train.Checkpoint(model, optimizer): LossScaleOptimizer(Adam(learning_rate=0.01, 0.02, 0.03)),
# loss scales 32768, 32768, 16384). The object graph holds the inner optimizer as the wrapper's child: a merge once
# took it for the wrapper's state and averaged its learning rate (0.02) and the loss scale (27306.67, no power of
# two). Now the learning rates, the loss scale, the step and iteration counters are input 1's; the moments the mean,
# input 1's under --optimizer-state first. Expected values from the inputs by tf_bundle.py (no TensorFlow).
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
