"""Writes the role samples (issue 25): a Keras 3 model with a Dense layer and a layer holding one scalar weight,
compiled with Adam and fitted from two seeds, saved as .keras and through tf.train.CheckpointManager; and a TF1
Adam graph saved with tf.compat.v1.train.Saver at two different step counts.

Run from the repository root with TensorFlow 2.21 / Keras 3.15 (the versions that made the committed files):
    /work/venvs/tf/bin/python samples/roles/make_roles.py
"""
import glob
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np
import tensorflow as tf
import keras

HERE = os.path.dirname(os.path.abspath(__file__))


@keras.saving.register_keras_serializable(package="wavg_roles")
class Temperature(keras.layers.Layer):
    """Multiplies its input by one trainable scalar (like CLIP's logit_scale)."""

    def build(self, input_shape):
        self.t = self.add_weight(name="t", shape=(), initializer="ones")

    def call(self, x):
        return x * self.t


def keras_model(seed, steps):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), Temperature()])
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.01 * seed), loss="mse")
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(8, 3)).astype("float32")
    y = rng.normal(size=(8, 2)).astype("float32")
    model.fit(x, y, batch_size=8, epochs=steps, verbose=0)
    return model


def keras_files(name, seed, steps):
    model = keras_model(seed, steps)
    model.save(os.path.join(HERE, name + ".keras"))
    folder = os.path.join(HERE, "tf2_" + name)
    shutil.rmtree(folder, ignore_errors=True)
    ckpt = tf.train.Checkpoint(model=model, optimizer=model.optimizer)
    tf.train.CheckpointManager(ckpt, folder, max_to_keep=1).save()


def tf1_file(name, seed, steps):
    tf.compat.v1.disable_eager_execution() if tf.executing_eagerly() else None
    graph = tf.Graph()
    with graph.as_default():
        tf.compat.v1.set_random_seed(seed)
        x = tf.constant(np.random.default_rng(seed).normal(size=(4, 3)).astype("float32"))
        w = tf.compat.v1.get_variable("dense/kernel", shape=(3, 2))
        t = tf.compat.v1.get_variable("temp/t", shape=(), initializer=tf.compat.v1.ones_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) * t - 1.0))
        step = tf.compat.v1.train.get_or_create_global_step()
        train = tf.compat.v1.train.AdamOptimizer(0.01 * seed).minimize(loss, global_step=step)
        saver = tf.compat.v1.train.Saver()
        with tf.compat.v1.Session(graph=graph) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            for _ in range(steps):
                sess.run(train)
            folder = os.path.join(HERE, "tf1_" + name)
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            saver.save(sess, os.path.join(folder, "model.ckpt"), global_step=step, write_meta_graph=False)


def expected():
    """Writes expected.json: per pair of inputs, every variable's expected merged value, read back with the framework.
    Counters and hyper-parameters (named from the framework's own objects below) keep input 1's value; everything
    else is the float32 mean, computed in float64 and rounded once."""
    import json
    import h5py

    def h5_values(path):
        import io, zipfile
        with zipfile.ZipFile(path) as z:
            f = h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
            out = {}
            f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
            return out

    def ckpt_values(folder):
        import glob
        r = tf.train.load_checkpoint(glob.glob(os.path.join(folder, "*.index"))[0][:-len(".index")])
        return {k: r.get_tensor(k) for k in r.get_variable_to_shape_map() if k != "_CHECKPOINTABLE_OBJECT_GRAPH"}

    # Keras 3 optimizer: variables[0] is `iterations`, variables[1] `learning_rate` (Optimizer.build tracks them
    # first); tf.train.Checkpoint adds save_counter; TF1 Adam adds global_step and beta1_power / beta2_power.
    kept = {"keras": {"optimizer/vars/0", "optimizer/vars/1"},
            "tf2": {"optimizer/_iterations/.ATTRIBUTES/VARIABLE_VALUE",
                    "optimizer/_learning_rate/.ATTRIBUTES/VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"},
            "tf1": {"global_step", "beta1_power", "beta2_power"}}
    pairs = {"keras": (h5_values(os.path.join(HERE, "a.keras")), h5_values(os.path.join(HERE, "b.keras"))),
             "tf2": (ckpt_values(os.path.join(HERE, "tf2_a")), ckpt_values(os.path.join(HERE, "tf2_b"))),
             "tf1": (ckpt_values(os.path.join(HERE, "tf1_a")), ckpt_values(os.path.join(HERE, "tf1_b")))}
    out = {}
    for case, (a, b) in pairs.items():
        out[case] = {}
        for name in a:
            x, y = np.asarray(a[name]), np.asarray(b[name])
            v = x if name in kept[case] else ((x.astype(np.float64) + y) / 2).astype(x.dtype)
            out[case][name] = {"role": "kept" if name in kept[case] else "averaged",
                               "value": v.reshape(-1).tolist()}
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)


if __name__ == "__main__" and os.environ.get("ROLES_EXPECTED_ONLY"):
    expected()
elif __name__ == "__main__":
    keras_files("a", 1, 2)
    keras_files("b", 2, 5)
    with open(os.path.join(HERE, "versions.txt"), "w") as f:
        f.write(f"tensorflow {tf.__version__}\nkeras {keras.__version__}\nnumpy {np.__version__}\n")
    tf.compat.v1.disable_eager_execution()
    tf1_file("a", 1, 2)
    tf1_file("b", 2, 5)
    # The `checkpoint` state files hold absolute paths; the tests name the prefixes.
    for state in glob.glob(os.path.join(HERE, "*", "checkpoint")):
        os.remove(state)
    expected()
