"""Writes the structure samples (roles decided by the file's structure, not by names): a TF1 graph with a Momentum
optimizer and an ExponentialMovingAverage of its weight, saved by tf.compat.v1.train.Saver (ema_a, ema_b); a TF2
tf.train.Checkpoint of a tf.Module that holds a weight `w` and an int64 variable named `iter` and no optimizer
(iter_a, iter_b). Every value is set, not trained; structure_values.json holds every variable as TensorFlow's own
reader gives it, from which the tests compute the expected merges.

Run from the repository root with TensorFlow 2.21 (the version that made the committed files):
    /work/venvs/tf/bin/python samples/roles/make_structure.py
"""
import json
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))


def fresh(name):
    folder = os.path.join(HERE, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    return folder


def tf1_ema(name, value):
    """dense/kernel = [v, v]; its Momentum slot = one gradient of v * sum(kernel), [v, v]; the EMA shadow starts at v
    and takes one step of decay 0.9 towards 2v: 0.9 v + 0.1 (2 v) = 1.1 v."""
    graph = tf.Graph()
    with graph.as_default():
        w = tf.compat.v1.get_variable("dense/kernel", initializer=tf.constant([value, value]))
        train = tf.compat.v1.train.MomentumOptimizer(0.0, 0.9).minimize(value * tf.reduce_sum(w))
        ema = tf.train.ExponentialMovingAverage(0.9)
        update = ema.apply([w])
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(train)
            sess.run(w.assign([2 * value, 2 * value]))
            sess.run(update)
            sess.run(w.assign([value, value]))
            folder = fresh(name)
            saver.save(sess, os.path.join(folder, "model.ckpt"), write_meta_graph=False)
            os.remove(os.path.join(folder, "checkpoint"))  # names this machine's path; the tests give the prefix


class Counted(tf.Module):
    """A model part that counts its own calls in a variable named `iter` (no optimizer anywhere)."""

    def __init__(self, value):
        super().__init__()
        self.w = tf.Variable([value, value])
        self.iter = tf.Variable(int(value), dtype=tf.int64)


def tf2_iter(name, value):
    tf.train.Checkpoint(model=Counted(value)).write(os.path.join(fresh(name), "ckpt"))


tf.compat.v1.disable_eager_execution()
tf1_ema("ema_a", 1.0)
tf1_ema("ema_b", 3.0)
tf.compat.v1.enable_eager_execution()
tf2_iter("iter_a", 1.0)
tf2_iter("iter_b", 3.0)

values = {}
for path in ("ema_a/model.ckpt", "ema_b/model.ckpt", "iter_a/ckpt", "iter_b/ckpt"):
    reader = tf.train.load_checkpoint(os.path.join(HERE, path))
    values[path] = {k: reader.get_tensor(k).tolist() for k in sorted(reader.get_variable_to_shape_map())
                    if k != "_CHECKPOINTABLE_OBJECT_GRAPH"}
with open(os.path.join(HERE, "structure_values.json"), "w") as f:
    json.dump(values, f, indent=1, sort_keys=True)
    f.write("\n")
