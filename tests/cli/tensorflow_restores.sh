# TensorFlow itself writes two TF2 object-based checkpoints (a Keras model trained a few steps with Adam, saved with
# tf.train.Checkpoint.write) and two TF1 Saver checkpoints (variables and Adam slots made in a graph); wavg merges
# each pair; TensorFlow restores the results and every value equals numpy's float64 mean rounded once to float32
# (integers: input 1's). TensorFlow is not a Debian package: set WAVG_TF_PYTHON to a python with tensorflow (e.g. a
# venv with tensorflow-cpu); skipped otherwise.
PY=${WAVG_TF_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import tensorflow' 2>/dev/null || { echo "no WAVG_TF_PYTHON with tensorflow"; exit 77; }
TF_CPP_MIN_LOG_LEVEL=3 "$PY" - "$WAVG" <<'PY'
import os, subprocess, sys
import numpy as np
import tensorflow as tf
import keras

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
        if isinstance(a, bytes):
            assert got == a, name
        elif np.issubdtype(np.asarray(a).dtype, np.floating):
            assert np.asarray(got).tobytes() == mean(np.asarray(a), np.asarray(b)).tobytes(), name
        else:
            assert np.array_equal(got, a), name
    return r, o

# TF2: a Keras model and its Adam optimizer, tracked by tf.train.Checkpoint.
def keras_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)])

x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
y = np.random.default_rng(1).normal(size=(64, 2)).astype(np.float32)
for i in (1, 2):
    keras.utils.set_random_seed(i)
    m = keras_model()
    opt = keras.optimizers.Adam(0.01)
    m.compile(optimizer=opt, loss="mse")
    m.fit(x, y, epochs=2, batch_size=16, verbose=0)
    tf.train.Checkpoint(model=m, optimizer=opt).write("tf2_%d/ckpt-%d" % (i, i))
os.makedirs("tf2_avg")
subprocess.run([wavg, "merge", "-q", "tf2_1/ckpt-1", "tf2_2/ckpt-2", "-o", "tf2_avg/avg.ckpt", "--tf-state"],
               check=True)
check_listing(["tf2_1/ckpt-1", "tf2_2/ckpt-2"], "tf2_avg/avg.ckpt")
assert tf.train.latest_checkpoint("tf2_avg") == "tf2_avg/avg.ckpt"
models = []
for p in ("tf2_1/ckpt-1", "tf2_2/ckpt-2", "tf2_avg/avg.ckpt"):
    m = keras_model()
    tf.train.Checkpoint(model=m).read(p).expect_partial().assert_existing_objects_matched()
    models.append(m)
for a, b, got in zip(*(m.get_weights() for m in models)):
    assert got.tobytes() == mean(a, b).tobytes()
print("TF2: Keras model restored from the merged checkpoint, %d weights equal the float64 mean"
      % len(models[2].get_weights()))

# TF1: a graph with dense/kernel and dense/bias, Adam slots, beta powers and global_step, saved by Saver.
tf.compat.v1.disable_eager_execution()
for i in (1, 2):
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(i)
        with tf.compat.v1.variable_scope("dense"):
            k = tf.compat.v1.get_variable("kernel", [4, 2])
            b = tf.compat.v1.get_variable("bias", [2], initializer=tf.compat.v1.zeros_initializer())
        step = tf.compat.v1.train.get_or_create_global_step()
        loss = tf.reduce_mean((tf.matmul(x, k) + b - y) ** 2)
        train = tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=g) as s:
            s.run(tf.compat.v1.global_variables_initializer())
            for _ in range(3 * i):
                s.run(train)
            saver.save(s, "tf1_%d/model.ckpt" % i, global_step=step)
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
      "global_step from input 1" % len(names))
PY
