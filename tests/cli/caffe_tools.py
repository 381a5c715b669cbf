# Independent .caffemodel parsing for the CLI tests: caffe_test.proto (the tests' own declaration of Caffe's
# messages) compiled here by protoc and read by python3-protobuf, no wavg code.
import os
import subprocess
import sys
import tempfile

import numpy as np

_here = os.path.dirname(os.path.abspath(__file__))
_out = tempfile.mkdtemp(prefix="caffe_test_pb2-")
subprocess.run(["protoc", f"-I{_here}", f"--python_out={_out}", os.path.join(_here, "caffe_test.proto")], check=True)
sys.path.insert(0, _out)
import caffe_test_pb2 as pb  # noqa: E402
from tf_bundle import put_varint as varint  # noqa: E402,F401  protobuf's varint, as the TensorFlow tests write it

CONVOLUTION, INNER_PRODUCT, DECONVOLUTION = 4, 14, 39


def load(path):
    net = pb.NetParameter()
    net.ParseFromString(open(path, "rb").read())
    return net


def true_shape(blob, v1_type, index):
    """The shape Caffe gives a blob today (BlobShape, or the 4-D legacy shape normalised as caffe.hpp says)."""
    if blob.HasField("shape"):
        return tuple(blob.shape.dim)
    d = (blob.num, blob.channels, blob.height, blob.width)
    if v1_type in (CONVOLUTION, DECONVOLUTION) and index == 0:
        return d
    if v1_type == INNER_PRODUCT and index == 0 and d[:2] == (1, 1):
        return d[2:]
    if v1_type in (CONVOLUTION, DECONVOLUTION, INNER_PRODUCT) and index == 1 and d[:3] == (1, 1, 1):
        return d[3:]
    first = 0
    while first < 3 and d[first] == 1:
        first += 1
    return d[first:]


def tensors(net):
    """{LAYER/INDEX: array} over either layout, float32 from data or float64 from double_data."""
    out = {}
    layers = [(l, -1) for l in net.layer] + [(l, l.type) for l in net.layers]
    for layer, v1_type in layers:
        for i, b in enumerate(layer.blobs):
            values = np.array(b.double_data, np.float64) if len(b.double_data) else np.array(b.data, np.float32)
            out[f"{layer.name}/{i}"] = values.reshape(true_shape(b, v1_type, i))
    return out


def without_blob_values(net):
    """A copy of `net` with every blob's values removed: what a merge must keep of input 1, serialised."""
    c = pb.NetParameter()
    c.CopyFrom(net)
    for layer in list(c.layer) + list(c.layers):
        for b in layer.blobs:
            b.ClearField("data")
            b.ClearField("double_data")
    return c.SerializeToString(deterministic=True)


def field(number, payload):
    """A length-delimited field: its tag, the payload's length and the payload."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload
