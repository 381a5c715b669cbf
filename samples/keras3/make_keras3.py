"""Makes the small Keras 3 files of samples/keras3 with Keras itself (run with a python that has keras 3 and a
backend; the committed files were made with Keras 3.15.1 on TensorFlow 2.21.0, CPU):

    KERAS_BACKEND=tensorflow /work/venv/bin/python samples/keras3/make_keras3.py samples/keras3

Each model is built twice with different seeds (a, b) and saved as a .keras archive; the EinsumDense model is also
saved in the legacy .h5 format (model order: einsum_dense before dense, while a Keras 3 file lists dense first).
Models are tiny so that the files stay a few kB each."""
import os
import sys

import keras
import numpy as np


def lstm_bigru():
    return keras.Sequential([keras.Input((3, 4)), keras.layers.LSTM(3, return_sequences=True),
                             keras.layers.Bidirectional(keras.layers.GRU(2)), keras.layers.Dense(2)])


def transformer():
    x = keras.Input((3, 4))
    a = keras.layers.MultiHeadAttention(num_heads=2, key_dim=2)(x, x)
    h = keras.layers.LayerNormalization()(keras.layers.Add()([x, a]))
    y = keras.layers.Dense(4)(keras.layers.Dense(3, activation="relu")(h))
    return keras.Model(x, keras.layers.LayerNormalization()(keras.layers.Add()([h, y])))


def nested():
    inner = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(3)])
    return keras.Sequential([keras.Input((4,)), inner, keras.layers.Dense(2)])


def einsum():
    # EinsumDense's kernel and Dense's kernel have the same shape (4, 4): only the layer order tells them apart.
    return keras.Sequential([keras.Input((4,)),
                             keras.layers.EinsumDense("ab,bc->ac", output_shape=4, bias_axes="c"),
                             keras.layers.Dense(4)])


def main(out):
    for name, build in [("lstm_bigru", lstm_bigru), ("transformer", transformer), ("nested", nested),
                        ("einsum", einsum)]:
        for tag, seed in (("a", 1), ("b", 2)):
            keras.utils.set_random_seed(seed)
            model = build()
            # Non-zero biases, so that a bias paired with the wrong layer would show.
            for w in model.weights:
                w.assign(np.random.default_rng(seed).standard_normal(w.shape).astype("float32"))
            model.save(os.path.join(out, f"{name}_{tag}.keras"))
            if name == "einsum":
                model.save(os.path.join(out, f"{name}_{tag}.h5"))


if __name__ == "__main__":
    main(sys.argv[1])
