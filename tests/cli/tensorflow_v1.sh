# TF1 V1 checkpoints (Saver(write_version=V1): one LevelDB table of SavedTensorSlices, written by TensorFlow 2.21 in
# samples/tensorflow/make_v1.py) are read (issue 25): inspect lists them, and two merge into a V2 checkpoint
# (-o avg.ckpt follows input 1, a TensorFlow checkpoint) whose floats, read back by tests/cli/tf_bundle.py, are
# numpy's float64 mean of the values TensorFlow's own reader gave (v1_values.json) rounded once, and whose
# global_step is input 1's. With WAVG_TF_PYTHON naming a python with TensorFlow, TensorFlow restores the output.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
S=$SAMPLES/tensorflow
cp -r "$S/v1_a" "$S/v1_b" .
"$WAVG" inspect v1_a/model.ckpt
"$WAVG" merge -q v1_a/model.ckpt v1_b/model.ckpt -o avg.ckpt
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$S/v1_values.json" <<'PY'
import json, sys
import numpy as np
import tf_bundle as tb
ref = json.load(open(sys.argv[1]))
a, b = ref["v1_a/model.ckpt"], ref["v1_b/model.ckpt"]
out = tb.read_checkpoint("avg.ckpt")
assert set(out) == set(a) | {"_WAVG_PROVENANCE"}, sorted(out)
for n, (dtype, shape, x) in a.items():
    got = out[n][2]
    assert list(got.shape) == shape and got.dtype == np.dtype(dtype), n
    if dtype.startswith("float"):
        want = ((np.array(x, np.dtype(dtype)).astype(np.float64) + np.array(b[n][2], np.dtype(dtype))) / 2)
        assert got.tobytes() == want.astype(dtype).reshape(shape).tobytes(), n
    else:
        assert got.ravel().tolist() == x, n
print("ok")
PY
[ -z "${WAVG_TF_PYTHON:-}" ] && exit 0
"$WAVG_TF_PYTHON" - <<'PY'
import os
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np, tensorflow as tf
r = tf.train.load_checkpoint("avg.ckpt")
a, b = tf.train.load_checkpoint("v1_a/model.ckpt"), tf.train.load_checkpoint("v1_b/model.ckpt")
for n in ("dense/kernel", "dense/bias", "extra/double"):
    x, y = a.get_tensor(n), b.get_tensor(n)
    assert np.array_equal(r.get_tensor(n), ((x.astype(np.float64) + y) / 2).astype(x.dtype)), n
assert r.get_tensor("global_step") == 3
PY
