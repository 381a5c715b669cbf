# Keras 3 Nadam's u_product in TF2 checkpoints (samples/keras3/nadam_{a,b}_tf2/ckpt, written by TensorFlow 2.21 /
# Keras 3.15.1 with tf.train.Checkpoint(model, optimizer), trained 1 and 3 steps): the optimizer's _u_product child,
# the running product of the momentum schedule, is a counter like _iterations: input 1's (0.468), where a merge once
# averaged it with input 2's (0.114) into a product no run reached. Expected values by tf_bundle.py and numpy.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
K=$SAMPLES/keras3
mkdir out
"$WAVG" merge -q "$K"/nadam_a_tf2/ckpt "$K"/nadam_b_tf2/ckpt -o out/ckpt
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$K" <<'PY'
import sys
import numpy as np
from tf_bundle import read_checkpoint
values = lambda prefix: {k: v[2] for k, v in read_checkpoint(prefix).items() if not isinstance(v[2], bytes)}
a, b, out = values(sys.argv[1] + "/nadam_a_tf2/ckpt"), values(sys.argv[1] + "/nadam_b_tf2/ckpt"), values("out/ckpt")
key = lambda path: f"optimizer/{path}/.ATTRIBUTES/VARIABLE_VALUE"
kept = {key("_iterations"), key("_learning_rate"), key("_u_product")}
for name in a:
    want = a[name] if name in kept else ((a[name].astype(np.float64) + b[name]) / 2).astype(a[name].dtype)
    assert out[name].dtype == a[name].dtype and np.array_equal(out[name], want), (name, out[name], want)
print(f'u_product {a[key("_u_product")]:.3f} and {b[key("_u_product")]:.3f}: {out[key("_u_product")]:.3f}')
PY
