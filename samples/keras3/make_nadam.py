"""Makes samples/keras3/nadam_a.keras and nadam_b.keras with Keras 3 itself (run with a python that has keras 3 and
a backend; the committed files were made with Keras 3.15.1 on JAX 0.10.2, CPU):

    KERAS_BACKEND=jax /work/venvs/keras3/bin/python samples/keras3/make_nadam.py samples/keras3

A Dense(2) model on 3 inputs compiled with Nadam(learning_rate=0.01) and trained for 1 (a) and 3 (b) steps on
fixed data, so that the optimizer's variables differ: optimizer/vars/0 the iteration count, vars/1 the learning
rate, vars/2..5 the momentums and velocities, vars/6 u_product, the running product of Nadam's momentum schedule
(a function of the step, like the iteration count). Prints each file's u_product and iteration count.

With the argument tf2 (and the TensorFlow backend) it writes the same two runs as TF2 checkpoints instead,
nadam_{a,b}_tf2/ckpt (tf.train.Checkpoint(model=..., optimizer=...).write), where u_product is the optimizer's
_u_product child; the committed ones were made with TensorFlow 2.21.0:

    KERAS_BACKEND=tensorflow /work/venvs/tf/bin/python samples/keras3/make_nadam.py samples/keras3 tf2"""
import io
import os
import sys
import zipfile

import h5py
import keras
import numpy as np


def make(path, seed, steps, tf2=False):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.Nadam(learning_rate=0.01), loss="mse")
    x = np.arange(12, dtype="float32").reshape(4, 3) / 10
    y = np.ones((4, 2), "float32")
    model.fit(x, y, batch_size=4, epochs=steps, verbose=0)
    if tf2:
        import tensorflow as tf

        tf.train.Checkpoint(model=model, optimizer=model.optimizer).write(os.path.join(path, "ckpt"))
        print(path, "iterations", int(model.optimizer.iterations.numpy()), "u_product",
              float(model.optimizer._u_product.numpy()))
        return
    model.save(path)
    with zipfile.ZipFile(path) as z, h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
        print(path, "iterations", f["optimizer/vars/0"][()], "u_product", f["optimizer/vars/6"][()])


out = sys.argv[1] if len(sys.argv) > 1 else "."
if sys.argv[2:] == ["tf2"]:
    make(os.path.join(out, "nadam_a_tf2"), 1, 1, tf2=True)
    make(os.path.join(out, "nadam_b_tf2"), 2, 3, tf2=True)
else:
    make(os.path.join(out, "nadam_a.keras"), 1, 1)
    make(os.path.join(out, "nadam_b.keras"), 2, 3)
print("keras", keras.__version__, "backend", keras.backend.backend())
