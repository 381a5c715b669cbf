# TensorFlow itself writes two TF2 object-based checkpoints (a Keras model trained a few steps with Adam, saved with
# tf.train.Checkpoint.write) and two TF1 Saver checkpoints (variables and Adam slots made in a graph); wavg merges
# each pair; TensorFlow restores the results and every value equals numpy's float64 mean rounded once to float32
# (integers: input 1's). TensorFlow is not a Debian package: set WAVG_TF_PYTHON to a python with tensorflow (e.g. a
# venv with tensorflow-cpu); skipped otherwise.
PY=${WAVG_TF_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import tensorflow' 2>/dev/null || { echo "no WAVG_TF_PYTHON with tensorflow"; exit 77; }
TF_CPP_MIN_LOG_LEVEL=3 "$PY" - "$WAVG" "$SAMPLES/tensorflow" <<'PY'
import os, subprocess, sys
import numpy as np
import tensorflow as tf

sys.path.insert(0, sys.argv[2])
import make_tensorflow as mk

wavg = sys.argv[1]

def mean(a, b):  # numpy's float64 mean, rounded once to the inputs' type
    return ((a.astype(np.float64) + b.astype(np.float64)) / 2).astype(a.dtype)

def check_listing(prefixes, out):
    r = [tf.train.load_checkpoint(p) for p in prefixes]
    o = tf.train.load_checkpoint(out)
    shapes = r[0].get_variable_to_shape_map()
    listed = set(o.get_variable_to_shape_map()) - {"_WAVG_PROVENANCE"}
    assert listed == set(shapes), (listed ^ set(shapes))
    for name in shapes:
        a, b, got = r[0].get_tensor(name), r[1].get_tensor(name), o.get_tensor(name)
        if isinstance(a, bytes) or name.endswith("_power"):  # Adam's beta powers are counters: input 1's
            assert np.asarray(got).tobytes() == np.asarray(a).tobytes(), name
        elif np.asarray(a).dtype.name == "bfloat16":  # 8 significant bits, rounded once, ties to even
            m, e = np.frexp((np.asarray(a, np.float64) + np.asarray(b, np.float64)) / 2)
            assert np.array_equal(np.asarray(got, np.float64), np.ldexp(np.round(m * 256) / 256, e)), name
        elif np.issubdtype(np.asarray(a).dtype, np.floating):
            assert np.asarray(got).tobytes() == mean(np.asarray(a), np.asarray(b)).tobytes(), name
        else:
            assert np.array_equal(got, a), name
    return r, o

# TF2: a Keras model and its Adam optimizer, tracked by tf.train.Checkpoint (samples/tensorflow/make_tensorflow.py).
for i in (1, 2):
    mk.write_tf2("tf2_%d/ckpt-%d" % (i, i), i)
os.makedirs("tf2_avg")
subprocess.run([wavg, "merge", "-q", "tf2_1/ckpt-1", "tf2_2/ckpt-2", "-o", "tf2_avg/avg.ckpt", "--tf-state"],
               check=True)
check_listing(["tf2_1/ckpt-1", "tf2_2/ckpt-2"], "tf2_avg/avg.ckpt")
assert tf.train.latest_checkpoint("tf2_avg") == "tf2_avg/avg.ckpt"
models = []
for p in ("tf2_1/ckpt-1", "tf2_2/ckpt-2", "tf2_avg/avg.ckpt"):
    m = mk.keras_model()
    tf.train.Checkpoint(model=m).read(p).expect_partial().assert_existing_objects_matched()
    models.append(m)
for a, b, got in zip(*(m.get_weights() for m in models)):
    assert got.tobytes() == mean(a, b).tobytes()
print("TF2: Keras model restored from the merged checkpoint, %d weights equal the float64 mean"
      % len(models[2].get_weights()))

# TF1: a graph with dense/kernel and dense/bias, Adam slots, beta powers and global_step, saved by Saver.
tf.compat.v1.disable_eager_execution()
for i in (1, 2):
    mk.write_tf1("tf1_%d" % i, i)
os.makedirs("tf1_avg")
subprocess.run([wavg, "merge", "-q", "tf1_1/model.ckpt-3", "tf1_2/model.ckpt-6.index", "-o", "tf1_avg/model.ckpt"],
               check=True)
r, o = check_listing(["tf1_1/model.ckpt-3", "tf1_2/model.ckpt-6"], "tf1_avg/model.ckpt")
names = sorted(r[0].get_variable_to_shape_map())
assert "dense/kernel/Adam_1" in names and "beta1_power" in names and o.get_tensor("global_step") == 3, names
g = tf.Graph()
with g.as_default():
    with tf.compat.v1.variable_scope("dense"):
        k = tf.compat.v1.get_variable("kernel", [4, 2])
    with tf.compat.v1.Session(graph=g) as s:
        tf.compat.v1.train.Saver([k]).restore(s, "tf1_avg/model.ckpt")
        got = s.run(k)
assert got.tobytes() == mean(r[0].get_tensor("dense/kernel"), r[1].get_tensor("dense/kernel")).tobytes()
print("TF1: Saver restored the merged checkpoint; %d variables listed, floats equal the float64 mean, "
      "global_step and the beta powers from input 1" % len(names))
PY
