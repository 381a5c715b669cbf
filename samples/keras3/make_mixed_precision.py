"""Makes the Keras 3 mixed-precision samples with Keras and TensorFlow themselves (the committed files were made with
Keras 3.15.1 on TensorFlow 2.21.0, CPU):

    KERAS_BACKEND=tensorflow /work/venvs/tf/bin/python samples/keras3/make_mixed_precision.py samples/keras3

Three runs of a Dense(2) model on 3 inputs under the mixed_float16 policy, compiled with
LossScaleOptimizer(Adam(learning_rate=R)), R = 0.01, 0.02, 0.03, trained on fixed data; run c first takes one step
on targets so large that the scaled float16 gradient overflows, so that its dynamic loss scale halves (32768, 32768,
16384) and that step is skipped. Each run is saved twice:

  lso_{a,b,c}.keras         model.save: optimizer/vars/0..3 the wrapper's own variables (iterations, learning rate,
                            step_counter, dynamic_scale), vars/4.. the inner Adam's (iterations, learning rate,
                            momentums and velocities), which optimizer/inner_optimizer/vars/0.. hold again
  lso_{a,b,c}_tf2/ckpt      tf.train.Checkpoint(model=..., optimizer=...).write: the same variables in a TF2
                            object graph, the inner optimizer the wrapper's child

Prints each run's learning rate, loss scale and iteration count."""
import os
import sys

os.environ.setdefault("KERAS_BACKEND", "tensorflow")
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

keras.mixed_precision.set_global_policy("mixed_float16")
x = np.arange(12, dtype="float32").reshape(4, 3) / 10
y = np.ones((4, 2), "float32")


def make(out, name, seed, rate, steps, overflow):
    keras.utils.set_random_seed(seed)
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2), keras.layers.Activation("linear",
                                                                                                 dtype="float32")])
    optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam(learning_rate=rate))
    model.compile(optimizer=optimizer, loss="mse")
    if overflow:
        model.fit(x, np.full((4, 2), 6e4, "float32"), batch_size=4, epochs=1, verbose=0)
    model.fit(x, y, batch_size=4, epochs=steps, verbose=0)
    model.save(os.path.join(out, name + ".keras"))
    tf.train.Checkpoint(model=model, optimizer=optimizer).write(os.path.join(out, name + "_tf2", "ckpt"))
    inner = optimizer.inner_optimizer
    print(name, "learning rate", float(inner.learning_rate.numpy()), "loss scale",
          float(optimizer.dynamic_scale.numpy()), "iterations", int(inner.iterations.numpy()))


out = sys.argv[1] if len(sys.argv) > 1 else "."
make(out, "lso_a", 1, 0.01, 1, False)
make(out, "lso_b", 2, 0.02, 3, False)
make(out, "lso_c", 3, 0.03, 2, True)
print("keras", keras.__version__, "tensorflow", tf.__version__, "backend", keras.backend.backend())
