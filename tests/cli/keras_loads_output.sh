# Keras itself loads what wavg writes: two Keras 3 models trained here are saved as .keras and .weights.h5, merged
# by wavg, and loaded back by keras.saving.load_model / Model.load_weights; every variable must equal numpy's mean.
# Keras 3 is not a Debian package: set WAVG_KERAS_PYTHON to a python with keras and a backend (e.g. a venv with
# keras and torch: KERAS_BACKEND defaults to torch here); without it the test is skipped.
PY=${WAVG_KERAS_PYTHON:-}
export KERAS_BACKEND=${KERAS_BACKEND:-torch}
[ -n "$PY" ] && "$PY" -c 'import keras' 2>/dev/null || { echo "no WAVG_KERAS_PYTHON with keras"; exit 77; }
"$PY" - <<'PY' || exit 1
import keras, numpy as np
for k in (1, 2):
    keras.utils.set_random_seed(k)
    m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(12, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(k).standard_normal((64, 8)).astype("float32")
    m.fit(x, x[:, :1], epochs=1, verbose=0)
    m.save(f"m{k}.keras")
    m.save_weights(f"m{k}.weights.h5")
PY
"$WAVG" merge -q m1.keras m2.keras -o avg.keras || exit 1
"$WAVG" merge -q m1.weights.h5 m2.weights.h5 -o avg.weights.h5 || exit 1
"$PY" - <<'PY' 2>/dev/null
import keras, numpy as np
a, b = keras.saving.load_model("m1.keras"), keras.saving.load_model("m2.keras")
avg = keras.saving.load_model("avg.keras")
for wa, wb, wg in zip(a.weights, b.weights, avg.weights):
    want = ((wa.numpy().astype(np.float64) + wb.numpy().astype(np.float64)) / 2).astype(np.float32)
    assert np.array_equal(want, wg.numpy()), wa.path
m = keras.Sequential([keras.Input((8,)), keras.layers.Dense(12, activation="relu"), keras.layers.Dense(1)])
m.compile(optimizer="adam", loss="mse")
m.load_weights("avg.weights.h5")
assert all(np.array_equal(w.numpy(), g.numpy()) for w, g in zip(m.weights, avg.weights))
print("Keras loads avg.keras and avg.weights.h5; every weight equals numpy's mean")
PY
