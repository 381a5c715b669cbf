#!/usr/bin/env python3
"""Writes the TensorFlow.js samples with the reference implementation (tensorflowjs 4.22.0 from PyPI).

Usage: make_tfjs.py [UNPACKED_WHEEL_DIR] [OUT_DIR]   (defaults: /tmp/tfjsdl/x and this script's directory)

UNPACKED_WHEEL_DIR holds the unpacked wheel (the tensorflowjs/ package). Only its write_weights.py,
quantization.py, converters/common.py, converters/keras_h5_conversion.py and version.py are loaded, without the
package __init__ (which would import TensorFlow); write_weights only uses tf.io.gfile.GFile, stubbed as open().
Every value is a closed form of its position (see values()), so tests recompute them without this script.
"""
import importlib.util
import json
import os
import shutil
import sys
import types

import numpy as np

SRC = sys.argv[1] if len(sys.argv) > 1 else "/tmp/tfjsdl/x"
OUT = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.abspath(__file__))

tf = types.ModuleType("tensorflow")
tf.io = types.SimpleNamespace(gfile=types.SimpleNamespace(GFile=open))
sys.modules["tensorflow"] = tf
pkg = types.ModuleType("tensorflowjs")
pkg.__path__ = [os.path.join(SRC, "tensorflowjs")]
sys.modules["tensorflowjs"] = pkg
conv = types.ModuleType("tensorflowjs.converters")
conv.__path__ = [os.path.join(SRC, "tensorflowjs", "converters")]
sys.modules["tensorflowjs.converters"] = conv


def load(name, rel):
    spec = importlib.util.spec_from_file_location(name, os.path.join(SRC, "tensorflowjs", rel))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    parent, _, leaf = name.rpartition(".")
    setattr(sys.modules[parent], leaf, mod)
    return mod


version = load("tensorflowjs.version", "version.py")
quantization = load("tensorflowjs.quantization", "quantization.py")
read_weights = load("tensorflowjs.read_weights", "read_weights.py")
write_weights = load("tensorflowjs.write_weights", "write_weights.py")
common = load("tensorflowjs.converters.common", "converters/common.py")
keras_h5 = load("tensorflowjs.converters.keras_h5_conversion", "converters/keras_h5_conversion.py")
assert version.version == "4.22.0", version.version

# A Sequential model 3 -> 4 -> 2 (Keras 2 config, as model.to_json() gives it).
TOPOLOGY = {
    "class_name": "Sequential",
    "config": {"name": "sequential", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, 3], "dtype": "float32",
                                                "sparse": False, "ragged": False, "name": "dense_input"}},
        {"class_name": "Dense", "config": {"name": "dense", "trainable": True, "dtype": "float32", "units": 4,
                                           "activation": "relu", "use_bias": True}},
        {"class_name": "Dense", "config": {"name": "dense_1", "trainable": True, "dtype": "float32", "units": 2,
                                           "activation": "linear", "use_bias": True}}]},
    "keras_version": "2.15.0", "backend": "tensorflow"}
SHAPES = [("dense/kernel", (3, 4)), ("dense/bias", (4,)), ("dense_1/kernel", (4, 2)), ("dense_1/bias", (2,))]


def values(model, k, n):
    """Element i of tensor k: A is (i + 1) / 8 * (k + 1) - 1/2, B is 2 - i / 16. Exact in float32."""
    i = np.arange(n, dtype=np.float64)
    v = (i + 1) / 8 * (k + 1) - 0.5 if model == "a" else 2 - i / 16
    return v.astype(np.float32)


def layers_weights(model):
    return [[{"name": name, "data": values(model, k, int(np.prod(shape))).reshape(shape)}
             for k, (name, shape) in enumerate(SHAPES)]]


def layers_model(name, model, shard_bytes, quant=None):
    out = os.path.join(OUT, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    keras_h5.write_artifacts(TOPOLOGY, layers_weights(model), out, quantization_dtype_map=quant,
                             weight_shard_size_bytes=shard_bytes, metadata={"source": "make_tfjs.py " + name})


def graph_model(name):
    """A graph model: MatMul + BiasAdd, its weights in two groups (one int32 step counter in the second)."""
    out = os.path.join(OUT, name)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    groups = [[{"name": "w", "data": values("a", 0, 6).reshape(2, 3)},
               {"name": "b", "data": values("b", 1, 3)}],
              [{"name": "step", "data": np.array([7, -3], np.int32)}]]
    manifest = write_weights.write_weights(groups, out, shard_size_bytes=16, write_manifest=False)
    node = lambda n, op, inputs, dtype: {"name": n, "op": op, "input": inputs,
                                         "attr": {"T": {"type": dtype}} if inputs else {"dtype": {"type": dtype}}}
    model_json = {
        common.FORMAT_KEY: common.TFJS_GRAPH_MODEL_FORMAT,
        common.GENERATED_BY_KEY: "2.15.0",
        common.CONVERTED_BY_KEY: common.get_converted_by(),
        common.SIGNATURE_KEY: {"inputs": {"x:0": {"name": "x:0", "dtype": "DT_FLOAT"}},
                               "outputs": {"y:0": {"name": "y:0", "dtype": "DT_FLOAT"}}},
        common.ARTIFACT_MODEL_TOPOLOGY_KEY: {
            "node": [node("x", "Placeholder", [], "DT_FLOAT"), node("w", "Const", [], "DT_FLOAT"),
                     node("b", "Const", [], "DT_FLOAT"), node("m", "MatMul", ["x", "w"], "DT_FLOAT"),
                     node("y", "BiasAdd", ["m", "b"], "DT_FLOAT")],
            "library": {}, "versions": {"producer": 1482}},
        common.ARTIFACT_WEIGHTS_MANIFEST_KEY: manifest,
    }
    with open(os.path.join(out, "model.json"), "wt") as f:
        json.dump(model_json, f)


layers_model("a", "a", 40)   # 104 bytes in shards of 40, 40, 24: dense/kernel spans shards 1 and 2
layers_model("b", "b", 40)
layers_model("q8", "a", 16, {"uint8": True})
layers_model("q16", "a", 16, {"uint16": True})
layers_model("f16", "a", 16, {"float16": True})
graph_model("graph")

# The reference reader's values, for anyone who wants to compare by hand (tests recompute them with numpy).
expected = {}
for name in ("a", "b", "q8", "q16", "f16", "graph"):
    with open(os.path.join(OUT, name, "model.json")) as f:
        manifest = json.load(f)["weightsManifest"]
    for w in read_weights.read_weights(manifest, os.path.join(OUT, name), flatten=True):
        expected[name + "/" + w["name"]] = w["data"].ravel().tolist()
with open(os.path.join(OUT, "expected.json"), "wt") as f:
    json.dump(expected, f, indent=0, sort_keys=True)
