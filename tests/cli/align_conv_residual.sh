# The permutation spec of a Keras functional model with Conv2D, BatchNormalization, a residual Add, MaxPooling,
# Flatten and Dense, written with h5py in Keras 2's layout: the test permutes the two groups of hidden units (the
# conv channels the Add ties together, and the Dense units) itself, checks with a numpy forward pass that the
# permuted model computes what the original does, and wavg align must return the original byte for byte.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import json
import h5py
import numpy as np

rng = np.random.default_rng(5)
def node(*names):
    return [[[n, 0, 0, {}] for n in names]]
def layer(cls, name, inbound, **config):
    return {"class_name": cls, "name": name, "config": dict(name=name, **config), "inbound_nodes": inbound}
layers = [
    layer("InputLayer", "input_1", [], batch_input_shape=[None, 6, 6, 2], dtype="float32"),
    layer("Conv2D", "conv1", node("input_1"), filters=4, kernel_size=[3, 3], padding="same", use_bias=True),
    layer("BatchNormalization", "bn1", node("conv1"), axis=[3]),
    layer("Activation", "relu1", node("bn1"), activation="relu"),
    layer("Conv2D", "conv2", node("relu1"), filters=4, kernel_size=[3, 3], padding="same", use_bias=True),
    layer("BatchNormalization", "bn2", node("conv2"), axis=[3]),
    layer("Add", "add", node("bn2", "relu1")),
    layer("Activation", "relu2", node("add"), activation="relu"),
    layer("MaxPooling2D", "pool", node("relu2"), pool_size=[2, 2]),
    layer("Flatten", "flatten", node("pool")),
    layer("Dense", "dense", node("flatten"), units=5, activation="relu", use_bias=True),
    layer("Dense", "dense_1", node("dense"), units=3, activation="softmax", use_bias=True),
]
config = {"class_name": "Functional", "config": {"name": "model", "layers": layers,
          "input_layers": [["input_1", 0, 0]], "output_layers": [["dense_1", 0, 0]]}}
f32 = lambda *s: rng.standard_normal(s).astype(np.float32)
A = {"conv1": {"kernel": f32(3, 3, 2, 4), "bias": f32(4)}, "conv2": {"kernel": f32(3, 3, 4, 4), "bias": f32(4)},
     "dense": {"kernel": f32(36, 5), "bias": f32(5)}, "dense_1": {"kernel": f32(5, 3), "bias": f32(3)}}
for bn in ("bn1", "bn2"):
    A[bn] = {"gamma": f32(4), "beta": f32(4), "moving_mean": f32(4),
             "moving_variance": rng.uniform(0.5, 2, 4).astype(np.float32)}

P, Q = np.array([2, 0, 3, 1]), np.array([1, 2, 3, 4, 0])  # B's channel c is A's channel P[c]; B's unit j is A's Q[j]
B = {k: dict(v) for k, v in A.items()}
B["conv1"] = {"kernel": A["conv1"]["kernel"][..., P], "bias": A["conv1"]["bias"][P]}
B["conv2"] = {"kernel": A["conv2"]["kernel"][:, :, P][..., P], "bias": A["conv2"]["bias"][P]}
for bn in ("bn1", "bn2"):
    B[bn] = {k: v[P] for k, v in A[bn].items()}
flat = (np.arange(9)[:, None] * 4 + P[None, :]).reshape(-1)
B["dense"] = {"kernel": A["dense"]["kernel"][flat][:, Q], "bias": A["dense"]["bias"][Q]}
B["dense_1"] = {"kernel": A["dense_1"]["kernel"][Q], "bias": A["dense_1"]["bias"]}

def forward(w, x):
    def conv(x, p):
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        out = sum(np.einsum("nijc,co->nijo", xp[:, di:di + 6, dj:dj + 6], p["kernel"][di, dj])
                  for di in range(3) for dj in range(3))
        return out + p["bias"]
    def bn(x, p):
        return (x - p["moving_mean"]) / np.sqrt(p["moving_variance"] + 1e-3) * p["gamma"] + p["beta"]
    h1 = np.maximum(bn(conv(x, w["conv1"]), w["bn1"]), 0)
    h2 = np.maximum(bn(conv(h1, w["conv2"]), w["bn2"]) + h1, 0)
    pooled = h2.reshape(-1, 3, 2, 3, 2, 4).max(axis=(2, 4)).reshape(-1, 36)
    d = np.maximum(pooled @ w["dense"]["kernel"] + w["dense"]["bias"], 0)
    return d @ w["dense_1"]["kernel"] + w["dense_1"]["bias"]
x = rng.standard_normal((7, 6, 6, 2))
assert np.allclose(forward(A, x), forward(B, x), atol=1e-5)  # the permutation is a symmetry of the network

for path, w in (("a.h5", A), ("b.h5", B)):
    with h5py.File(path, "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        f.attrs["keras_version"] = "2.13.1"
        f.attrs["backend"] = "tensorflow"
        g = f.create_group("model_weights")
        g.attrs["layer_names"] = [l["name"].encode() for l in layers]
        for l in layers:
            lg = g.create_group(l["name"])
            names = list(w.get(l["name"], {}))
            lg.attrs["weight_names"] = [f"{l['name']}/{n}:0".encode() for n in names]
            for n in names:
                lg.create_dataset(f"{l['name']}/{n}:0", data=w[l["name"]][n])
PY
"$WAVG" align b.h5 --to a.h5 -o out.h5 --no-hash --seed 3 >report.txt
head -1 report.txt | sed 's/, [0-9]* passes$/, N passes/'
tail -n +2 report.txt
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
with h5py.File("a.h5", "r") as a, h5py.File("out.h5", "r") as out:
    names = []
    a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    assert len(names) == 16, names
    for n in names:
        assert np.asarray(a[n][()]).tobytes() == np.asarray(out[n][()]).tobytes(), n
PY
