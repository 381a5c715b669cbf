#!/usr/bin/python3
"""Regenerate every sample checkpoint under samples/.

Run from the repository root:

    /usr/bin/python3 samples/make_samples.py

Fully deterministic (no randomness); every value is given by a closed-form
formula that is exact in the stored dtype, so tests can compute the expected
means without running wavg.  See samples/README.md for the formulas.

Files written:
    samples/mlp/node1.h5, node2.h5, node3.h5   Keras 2.10 model.save() layout, MLP 4-8-3
    samples/mlp/incompatible.h5                 same layout, hidden layer has 9 units
    samples/dtypes/a.h5, samples/dtypes/b.h5    plain HDF5, mixed dtypes, chunked+gzip

After writing, the script re-reads every file and checks the values and the
plain means against the closed forms; it exits non-zero if anything differs.
"""

import json
import os
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MLP_DIR = os.path.join(HERE, "mlp")
DTYPES_DIR = os.path.join(HERE, "dtypes")

KERAS_VERSION = "2.10.0"
BACKEND = "tensorflow"


# --------------------------------------------------------------------------
# Closed-form values
# --------------------------------------------------------------------------

def base(t, n):
    """base(t, i) = (((3*i + t) % 17) - 8) / 16 for flat index i in [0, n)."""
    i = np.arange(n, dtype=np.int64)
    return (((3 * i + t) % 17) - 8).astype(np.float64) / 16.0


def mlp_weight(t, shape, k):
    n = int(np.prod(shape))
    return (base(t, n) + (k - 2) / 4.0).reshape(shape).astype(np.float32)


def mlp_m(t, shape, k):
    n = int(np.prod(shape))
    return (base(t, n) / 2.0 + (k - 2) / 8.0).reshape(shape).astype(np.float32)


def mlp_v(t, shape, k):
    n = int(np.prod(shape))
    return (np.abs(base(t, n)) + k / 4.0).reshape(shape).astype(np.float32)


def mlp_iter(k):
    return np.int64(100 * k)


def c_of(n):
    """c(i) = ((7*i) % 11 - 5) / 8."""
    i = np.arange(n, dtype=np.int64)
    return (((7 * i) % 11) - 5).astype(np.float64) / 8.0


D = 0.25


def dtypes_float(shape, j, dtype):
    n = int(np.prod(shape)) if shape else 1
    return (c_of(n) + j * D).reshape(shape).astype(dtype)


# --------------------------------------------------------------------------
# Keras 2.10 model.save() layout
# --------------------------------------------------------------------------

def model_config(hidden):
    """Keras 2.10 Sequential config: Dense(hidden, relu, input_shape=(4,)), Dense(3, softmax)."""
    def dense(name, units, activation, batch_input_shape=None):
        cfg = {"name": name, "trainable": True}
        if batch_input_shape is not None:
            cfg["batch_input_shape"] = batch_input_shape
        cfg.update({
            "dtype": "float32",
            "units": units,
            "activation": activation,
            "use_bias": True,
            "kernel_initializer": {"class_name": "GlorotUniform", "config": {"seed": None}},
            "bias_initializer": {"class_name": "Zeros", "config": {}},
            "kernel_regularizer": None,
            "bias_regularizer": None,
            "activity_regularizer": None,
            "kernel_constraint": None,
            "bias_constraint": None,
        })
        return {"class_name": "Dense", "config": cfg}

    return {
        "class_name": "Sequential",
        "config": {
            "name": "sequential",
            "layers": [
                {"class_name": "InputLayer", "config": {
                    "batch_input_shape": [None, 4], "dtype": "float32",
                    "sparse": False, "ragged": False, "name": "dense_input"}},
                dense("dense", hidden, "relu", [None, 4]),
                dense("dense_1", 3, "softmax"),
            ],
        },
    }


TRAINING_CONFIG = {
    "loss": "categorical_crossentropy",
    "metrics": [[{"class_name": "MeanMetricWrapper",
                  "config": {"name": "accuracy", "dtype": "float32",
                             "fn": "categorical_accuracy"}}]],
    "weighted_metrics": None,
    "loss_weights": None,
    "optimizer_config": {
        "class_name": "Adam",
        "config": {
            "name": "Adam",
            "learning_rate": 0.0010000000474974513,
            "decay": 0.0,
            "beta_1": 0.8999999761581421,
            "beta_2": 0.9990000128746033,
            "epsilon": 1e-07,
            "amsgrad": False,
        },
    },
}


def mlp_tensors(hidden):
    """[(t, layer, short_name, shape)] in model_weights numbering t = 0..3."""
    return [
        (0, "dense", "kernel", (4, hidden)),
        (1, "dense", "bias", (hidden,)),
        (2, "dense_1", "kernel", (hidden, 3)),
        (3, "dense_1", "bias", (3,)),
    ]


def write_keras(path, hidden, k):
    """Mimics keras 2.10 saving/legacy/hdf5_format.save_model_to_hdf5 call by call."""
    tensors = mlp_tensors(hidden)
    layers = ["dense", "dense_1"]
    with h5py.File(path, "w") as f:
        # model_metadata: str values -> vlen UTF-8, JSON dicts .encode() -> vlen ASCII
        f.attrs["keras_version"] = KERAS_VERSION
        f.attrs["backend"] = BACKEND
        f.attrs["model_config"] = json.dumps(model_config(hidden)).encode("utf8")
        f.attrs["training_config"] = json.dumps(TRAINING_CONFIG).encode("utf8")

        # save_weights_to_hdf5_group(model_weights_group, model)
        mw = f.create_group("model_weights")
        mw.attrs["layer_names"] = [n.encode("utf8") for n in layers]
        mw.attrs["backend"] = BACKEND.encode("utf8")
        mw.attrs["keras_version"] = KERAS_VERSION.encode("utf8")
        for layer in sorted(layers):
            g = mw.create_group(layer)
            mine = [tt for tt in tensors if tt[1] == layer]
            names = [f"{layer}/{short}:0".encode("utf8") for (_, _, short, _) in mine]
            g.attrs["weight_names"] = names
            for name, (t, _, _, shape) in zip(names, mine):
                val = mlp_weight(t, shape, k)
                d = g.create_dataset(name, val.shape, dtype=val.dtype)
                d[:] = val
        # top-level weights of a Sequential: none -> np.asarray([]) is float64 (0,)
        top = mw.create_group("top_level_model_weights")
        top.attrs["weight_names"] = np.asarray([])

        # save_optimizer_weights_to_hdf5_group: iter, then all m, then all v
        opt = [("Adam/iter:0", mlp_iter(k))]
        for slot, fn in (("m", mlp_m), ("v", mlp_v)):
            for (t, layer, short, shape) in tensors:
                opt.append((f"Adam/{layer}/{short}/{slot}:0", fn(t, shape, k)))
        og = f.create_group("optimizer_weights")
        og.attrs["weight_names"] = [n.encode("utf8") for n, _ in opt]
        for name, val in opt:
            val = np.asarray(val)
            d = og.create_dataset(name.encode("utf8"), val.shape, dtype=val.dtype)
            if not val.shape:
                d[()] = val
            else:
                d[:] = val


# --------------------------------------------------------------------------
# Plain HDF5 mixed-dtype samples
# --------------------------------------------------------------------------

DTYPE_FLOATS = [
    ("layer1/w", (3, 5), np.float16),
    ("layer1/b", (5,), np.float64),
    ("layer2/w", (64, 35), np.float32),
]


def write_plain(path, j):
    with h5py.File(path, "w") as f:
        f.attrs["note"] = "plain hdf5 sample"
        for name, shape, dt in DTYPE_FLOATS:
            val = dtypes_float(shape, j, dt)
            if name == "layer2/w":
                f.create_dataset(name, data=val, chunks=(16, 8),
                                 compression="gzip", compression_opts=4, shuffle=True)
            else:
                f.create_dataset(name, data=val)
        f["layer1"].attrs["rank"] = np.int64(j)
        f.create_dataset("quant/table", data=(np.arange(10) - 5).astype(np.int8))
        f.create_dataset("step", data=np.int64(10 + j))


# --------------------------------------------------------------------------
# Verification
# --------------------------------------------------------------------------

def _check(cond, msg, errors):
    if not cond:
        errors.append(msg)


def _names(attr):
    return [n.decode("utf8") if isinstance(n, bytes) else str(n) for n in attr]


def verify():
    errors = []
    node_paths = [os.path.join(MLP_DIR, f"node{k}.h5") for k in (1, 2, 3)]
    files = [h5py.File(p, "r") for p in node_paths]
    try:
        for k, f in zip((1, 2, 3), files):
            _check(_names(f["model_weights"].attrs["layer_names"]) == ["dense", "dense_1"],
                   f"node{k}: layer_names", errors)
            tl = f["model_weights/top_level_model_weights"].attrs["weight_names"]
            _check(tl.dtype == np.float64 and tl.shape == (0,),
                   f"node{k}: top_level weight_names not float64 (0,)", errors)
            it = f["optimizer_weights/Adam/iter:0"]
            _check(it.shape == () and it.dtype == np.int64 and it[()] == 100 * k,
                   f"node{k}: Adam/iter:0", errors)
        for (t, layer, short, shape) in mlp_tensors(8):
            wpath = f"model_weights/{layer}/{layer}/{short}:0"
            for slot, fn, mean_expected in (
                    (None, mlp_weight, base(t, int(np.prod(shape))).reshape(shape)),
                    ("m", mlp_m, base(t, int(np.prod(shape))).reshape(shape) / 2),
                    ("v", mlp_v, np.abs(base(t, int(np.prod(shape))).reshape(shape)) + 0.5)):
                p = wpath if slot is None else f"optimizer_weights/Adam/{layer}/{short}/{slot}:0"
                arrs = []
                for k, f in zip((1, 2, 3), files):
                    a = f[p][...]
                    _check(a.dtype == np.float32 and a.shape == shape, f"node{k}:{p} dtype/shape", errors)
                    _check(np.array_equal(a, fn(t, shape, k)), f"node{k}:{p} values", errors)
                    arrs.append(a)
                stack = np.stack(arrs)
                m1 = stack.mean(axis=0, dtype=np.float32)                  # pairwise float32
                m2 = (arrs[0] + arrs[1] + arrs[2]) / np.float32(3)         # naive float32
                exp = mean_expected.astype(np.float32)
                _check(np.array_equal(exp.astype(np.float64), mean_expected),
                       f"{p}: closed-form mean not exact in float32", errors)
                _check(np.array_equal(m1, exp) and np.array_equal(m2, exp),
                       f"{p}: float32 mean != closed form", errors)
    finally:
        for f in files:
            f.close()

    with h5py.File(os.path.join(MLP_DIR, "incompatible.h5"), "r") as f:
        _check(f["model_weights/dense/dense/kernel:0"].shape == (4, 9), "incompatible kernel", errors)
        _check(f["model_weights/dense_1/dense_1/kernel:0"].shape == (9, 3), "incompatible kernel_1", errors)
        _check(f["optimizer_weights/Adam/iter:0"][()] == 100 * INCOMPATIBLE_K, "incompatible iter", errors)

    fa = h5py.File(os.path.join(DTYPES_DIR, "a.h5"), "r")
    fb = h5py.File(os.path.join(DTYPES_DIR, "b.h5"), "r")
    try:
        for name, shape, dt in DTYPE_FLOATS:
            a, b = fa[name][...], fb[name][...]
            _check(a.dtype == dt and b.dtype == dt and a.shape == shape, f"{name} dtype/shape", errors)
            _check(np.array_equal(a, dtypes_float(shape, 0, dt)), f"a:{name}", errors)
            _check(np.array_equal(b, dtypes_float(shape, 1, dt)), f"b:{name}", errors)
            exp64 = c_of(int(np.prod(shape))).reshape(shape) + D / 2
            exp = exp64.astype(dt)
            _check(np.array_equal(exp.astype(np.float64), exp64), f"{name}: mean not exact in {dt}", errors)
            _check(np.array_equal(((a.astype(np.float64) + b) / 2).astype(dt), exp), f"{name}: mean", errors)
            _check(np.array_equal((a + b) / dt(2), exp), f"{name}: mean in native dtype", errors)
        d = fa["layer2/w"]
        _check(d.chunks == (16, 8) and d.compression == "gzip" and d.compression_opts == 4
               and d.shuffle, "layer2/w storage", errors)
        for j, f in ((0, fa), (1, fb)):
            _check(np.array_equal(f["quant/table"][...], np.arange(10, dtype=np.int8) - 5)
                   and f["quant/table"].dtype == np.int8, "quant/table", errors)
            _check(f["step"].shape == () and f["step"].dtype == np.int64 and f["step"][()] == 10 + j,
                   "step", errors)
            _check(f["layer1"].attrs["rank"] == j, "rank attr", errors)
            _check(f.attrs["note"] == "plain hdf5 sample", "note attr", errors)
    finally:
        fa.close()
        fb.close()
    return errors


INCOMPATIBLE_K = 4


def main():
    os.makedirs(MLP_DIR, exist_ok=True)
    os.makedirs(DTYPES_DIR, exist_ok=True)
    written = []
    for k in (1, 2, 3):
        p = os.path.join(MLP_DIR, f"node{k}.h5")
        write_keras(p, 8, k)
        written.append(p)
    p = os.path.join(MLP_DIR, "incompatible.h5")
    write_keras(p, 9, INCOMPATIBLE_K)
    written.append(p)
    for j, name in ((0, "a.h5"), (1, "b.h5")):
        p = os.path.join(DTYPES_DIR, name)
        write_plain(p, j)
        written.append(p)

    for p in written:
        print(f"wrote {os.path.relpath(p)} ({os.path.getsize(p)} bytes)")
    errors = verify()
    if errors:
        for e in errors:
            print("VERIFY FAILED:", e, file=sys.stderr)
        return 1
    print(f"verified: values and plain means match the closed forms (h5py {h5py.__version__}, "
          f"HDF5 {h5py.version.hdf5_version}, numpy {np.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
