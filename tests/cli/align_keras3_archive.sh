# The permutation spec of a Keras 3 .keras archive comes from its config.json, its tensors named layers/K/vars/I
# (keras/src/saving/saving_lib.py): a Sequential Dense(6) -> BatchNormalization -> Dense(5) -> Dense(3) archive
# written here with zipfile and h5py as Keras 3.15 lays it out. B is an independent model: B_aligned must compute
# what B computes (a numpy forward pass, BatchNormalization in inference mode) with its units moved; A with its
# hidden units shuffled by the test must come back as A byte for byte.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 - "$WAVG" <<'PY'
import io, json, subprocess, sys, zipfile
import h5py
import numpy as np

wavg = sys.argv[1]
rng = np.random.default_rng(7)
def layer(cls, name, **config):
    return {"module": "keras.layers", "class_name": cls, "config": dict(name=name, trainable=True, **config),
            "registered_name": None}
config = {"module": "keras", "class_name": "Sequential", "config": {"name": "sequential", "trainable": True, "layers": [
    layer("InputLayer", "input_layer", batch_shape=[None, 4], dtype="float32"),
    layer("Dense", "hidden", units=6, activation="relu", use_bias=True),
    layer("BatchNormalization", "norm", axis=-1, epsilon=0.001, center=True, scale=True),
    layer("Dense", "hidden_2", units=5, activation="relu", use_bias=True),
    layer("Dense", "logits", units=3, activation="linear", use_bias=True)]}, "registered_name": None}
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
def model():
    return {"dense": [f32(4, 6), f32(6)],
            "batch_normalization": [f32(6), f32(6), f32(6), rng.uniform(0.5, 2, 6).astype(np.float32)],
            "dense_1": [f32(6, 5), f32(5)], "dense_2": [f32(5, 3), f32(3)]}

def forward(w, x):
    h = np.maximum(x @ w["dense"][0] + w["dense"][1], 0)
    g, b, m, v = w["batch_normalization"]
    h = (h - m) / np.sqrt(v + 1e-3) * g + b
    h = np.maximum(h @ w["dense_1"][0] + w["dense_1"][1], 0)
    return h @ w["dense_2"][0] + w["dense_2"][1]

def save(path, w):
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        f.create_group("layers")
        for k, vs in w.items():
            g = f.create_group(f"layers/{k}/vars")
            for i, v in enumerate(vs):
                g.create_dataset(str(i), data=v)
        f.create_group("vars")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("metadata.json", json.dumps({"keras_version": "3.15.1", "date_saved": "2026-11-23@12:00:00"}))
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", buf.getvalue())

def load(path):
    with zipfile.ZipFile(path) as z, h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
        return {k: [f[f"layers/{k}/vars/{i}"][()] for i in range(len(f[f"layers/{k}/vars"]))] for k in f["layers"]}

def align(b, a, out):
    subprocess.run([wavg, "align", b, "--to", a, "-o", out, "--no-hash", "-q"], check=True)

A, B = model(), model()
x = rng.standard_normal((9, 4)).astype(np.float32)
save("a.keras", A)
save("b.keras", B)
align("b.keras", "a.keras", "b_aligned.keras")
C = load("b_aligned.keras")
assert any(not np.array_equal(C[k][0], B[k][0]) for k in B), "nothing moved"
assert np.allclose(forward(B, x), forward(C, x), atol=1e-5), "B_aligned computes something else"

P, Q = rng.permutation(6), rng.permutation(5)
S = {"dense": [A["dense"][0][:, P], A["dense"][1][P]], "batch_normalization": [v[P] for v in A["batch_normalization"]],
     "dense_1": [A["dense_1"][0][P][:, Q], A["dense_1"][1][Q]], "dense_2": [A["dense_2"][0][Q], A["dense_2"][1]]}
assert np.allclose(forward(A, x), forward(S, x), atol=1e-5)  # the shuffle is a symmetry of the network
save("a_shuffled.keras", S)
align("a_shuffled.keras", "a.keras", "a_recovered.keras")
R = load("a_recovered.keras")
for k in A:
    for u, v in zip(A[k], R[k]):
        assert u.tobytes() == v.tobytes(), k
print("function preserved, shuffle recovered")
PY
