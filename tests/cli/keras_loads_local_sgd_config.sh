# The model_config that wavg local-sgd writes into its checkpoints is one Keras rebuilds: keras.models.model_from_json
# makes the model, the file's weights go in, and its predictions equal numpy's forward pass over the same weights.
# Keras 3 is not a Debian package: set WAVG_KERAS_PYTHON to a python with keras and a backend; without it the test
# is skipped.
PY=${WAVG_KERAS_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import keras' 2>/dev/null || { echo "no WAVG_KERAS_PYTHON with keras"; exit 77; }
"$WAVG" local-sgd -q --data "$SAMPLES/digits/digits.csv.gz" --workers 1 --period 20 --rounds 1 --out-dir run
"$PY" - <<'PY' 2>/dev/null
import h5py, keras, numpy as np
with h5py.File("run/final.h5", "r") as f:
    model = keras.models.model_from_json(f.attrs["model_config"])
    names = ["dense", "dense_1", "dense_2"]
    weights = [f[f"{n}/{v}"][()] for n in names for v in ("kernel", "bias")]
model.set_weights(weights)
x = np.random.default_rng(0).random((8, 64))
h = x
for i in range(3):
    h = h @ weights[2 * i] + weights[2 * i + 1]
    h = np.maximum(h, 0) if i < 2 else np.exp(h - h.max(1, keepdims=True))
h /= h.sum(1, keepdims=True)
assert np.abs(model.predict(x, verbose=0) - h).max() < 1e-6
print("Keras rebuilds the model from model_config; its predictions equal numpy's")
PY
