#!/usr/bin/env python3
"""Writes the TensorFlow checkpoints in this folder with TensorFlow itself (run once; the files are committed):

  tf2_a/ckpt-1, tf2_b/ckpt-2           a Keras model (Dense 4-8-2) and its Adam optimizer after 2 epochs on fixed
                                       data, seeds 1 and 2, saved with tf.train.Checkpoint(model, optimizer).write
  tf1_a/model.ckpt-3, tf1_b/model.ckpt-6  a TF1 graph: dense/kernel, dense/bias trained 3 and 6 steps with
                                       tf.compat.v1.train.AdamOptimizer (slots dense/kernel/Adam, .../Adam_1,
                                       beta1_power, beta2_power, global_step int64), plus untrained extra/half
                                       (float16), extra/bf16 (bfloat16) and extra/double, saved with Saver

Made with tensorflow-cpu 2.21.0 and Keras 3.15 (python3 make_tensorflow.py in a venv with them).
"""
import os

os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
y = np.random.default_rng(1).normal(size=(64, 2)).astype(np.float32)


def keras_model():
    return keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)])


def write_tf2(prefix, seed):
    """Trains a Keras model 2 epochs with Adam from `seed` and writes it and its optimizer with tf.train.Checkpoint."""
    keras.utils.set_random_seed(seed)
    m = keras_model()
    opt = keras.optimizers.Adam(0.01)
    m.compile(optimizer=opt, loss="mse")
    m.fit(x, y, epochs=2, batch_size=16, verbose=0)
    tf.train.Checkpoint(model=m, optimizer=opt).write(prefix)


def write_tf1(directory, seed):
    """Trains the TF1 graph 3 * seed steps with Adam and saves it with Saver as DIRECTORY/model.ckpt-STEP (graph mode
    only: call tf.compat.v1.disable_eager_execution() first)."""
    g = tf.Graph()
    with g.as_default():
        tf.compat.v1.set_random_seed(seed)
        with tf.compat.v1.variable_scope("dense"):
            k = tf.compat.v1.get_variable("kernel", [4, 2])
            b = tf.compat.v1.get_variable("bias", [2], initializer=tf.compat.v1.zeros_initializer())
        with tf.compat.v1.variable_scope("extra"):
            for name, dtype in (("half", tf.float16), ("bf16", tf.bfloat16), ("double", tf.float64)):
                tf.compat.v1.get_variable(name, [3], dtype=dtype, trainable=False,
                                          initializer=tf.compat.v1.random_normal_initializer(seed=seed))
        step = tf.compat.v1.train.get_or_create_global_step()
        loss = tf.reduce_mean((tf.matmul(x, k) + b - y) ** 2)
        train = tf.compat.v1.train.AdamOptimizer(0.01).minimize(loss, global_step=step)
        with tf.compat.v1.Session(graph=g) as s:
            s.run(tf.compat.v1.global_variables_initializer())
            for _ in range(3 * seed):
                s.run(train)
            tf.compat.v1.train.Saver().save(s, os.path.join(directory, "model.ckpt"), global_step=step,
                                            write_meta_graph=False, write_state=False)


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    write_tf2(os.path.join(here, "tf2_a", "ckpt-1"), 1)
    write_tf2(os.path.join(here, "tf2_b", "ckpt-2"), 2)
    tf.compat.v1.disable_eager_execution()
    write_tf1(os.path.join(here, "tf1_a"), 1)
    write_tf1(os.path.join(here, "tf1_b"), 2)
