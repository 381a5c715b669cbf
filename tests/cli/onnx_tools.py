# Independent ONNX models for the CLI tests: onnx_test.proto (the tests' own declaration of ONNX's messages)
# compiled here by protoc and used by python3-protobuf, no wavg code. make() writes a small model in one of
# ONNX's three value forms; tensors() reads every initializer and Constant value back as numpy arrays.
import os
import subprocess
import sys
import tempfile

import numpy as np

_here = os.path.dirname(os.path.abspath(__file__))
_out = tempfile.mkdtemp(prefix="onnx_test_pb2-")
subprocess.run(["protoc", f"-I{_here}", f"--python_out={_out}", os.path.join(_here, "onnx_test.proto")], check=True)
sys.path.insert(0, _out)
import onnx_test_pb2 as pb  # noqa: E402

FLOAT, INT64, FLOAT16, DOUBLE = 1, 7, 10, 11
NUMPY = {FLOAT: np.float32, INT64: np.int64, FLOAT16: np.float16, DOUBLE: np.float64}
CODE = {np.dtype(v): k for k, v in NUMPY.items()}


def load(path):
    m = pb.ModelProto()
    with open(path, "rb") as f:
        m.ParseFromString(f.read())
    return m


def tensor(name, array, form, folder=None, location="weights.bin"):
    """A TensorProto of `array` in `form`: raw (raw_data), typed (float_data, int32_data, ...) or external
    (appended to folder/location)."""
    t = pb.TensorProto(name=name, data_type=CODE[array.dtype], dims=list(array.shape))
    if form == "raw":
        t.raw_data = array.tobytes()
    elif form == "typed":
        flat = array.reshape(-1)
        if array.dtype == np.float32:
            t.float_data.extend(flat.tolist())
        elif array.dtype == np.float64:
            t.double_data.extend(flat.tolist())
        elif array.dtype == np.int64:
            t.int64_data.extend(flat.tolist())
        elif array.dtype == np.float16:
            t.int32_data.extend(flat.view(np.uint16).astype(np.int32).tolist())
    else:
        path = os.path.join(folder, location)
        offset = os.path.getsize(path) if os.path.exists(path) else 0
        with open(path, "ab") as f:
            f.write(array.tobytes())
        t.data_location = 1
        for k, v in (("location", location), ("offset", str(offset)), ("length", str(array.nbytes))):
            t.external_data.add(key=k, value=v)
    return t


def values(seed):
    """The tensors of model `seed`: its weights random, its Reshape target and Resize scales per seed."""
    r = np.random.RandomState(seed)
    return {
        "W": r.standard_normal((3, 4)).astype(np.float32),
        "B": r.standard_normal(3).astype(np.float32),
        "C": r.standard_normal(3).astype(np.float32),  # a Constant node's value
        "D": r.standard_normal(2),  # float64
        "E": r.standard_normal(5).astype(np.float16),
        "V": r.standard_normal((16, 20)).astype(np.float32),  # 1,280 bytes: over onnx's external threshold
        "shape": np.array([3, 1] if seed % 2 else [1, 3], dtype=np.int64),
        "scales": np.array([1.0, float(1 + seed % 3)], dtype=np.float32),
    }


def value_info(name, dims):
    v = pb.ValueInfoProto(name=name)
    v.type.tensor_type.elem_type = FLOAT
    for d in dims:
        dim = v.type.tensor_type.shape.dim.add()
        if isinstance(d, str):
            dim.dim_param = d
        else:
            dim.dim_value = d
    return v


def make(path, seed, form="raw"):
    """Writes model `seed` to `path`: Y = Resize(Reshape((X W^T + B) * C, shape), scales), with D, E and V unused."""
    folder = os.path.dirname(os.path.abspath(path))
    v = values(seed)
    m = pb.ModelProto(ir_version=8, producer_name="onnx_tools", producer_version="1", doc_string="a test model")
    m.opset_import.add(domain="", version=13)
    m.metadata_props.add(key="author", value="tests")
    g = m.graph
    g.name = "tiny"
    g.doc_string = "kept as it is"
    g.input.append(value_info("X", [1, 4]))
    g.output.append(value_info("Y", ["h", "w"]))
    g.node.add(op_type="Gemm", input=["X", "W", "B"], output=["H"], name="gemm",
               attribute=[pb.AttributeProto(name="transB", i=1, type=2)])
    const = g.node.add(op_type="Constant", output=["C"], name="const")
    const.attribute.add(name="value", type=4, t=tensor("C", v["C"], form, folder))
    g.node.add(op_type="Mul", input=["H", "C"], output=["M"], name="mul")
    g.node.add(op_type="Reshape", input=["M", "shape"], output=["R"], name="reshape")
    g.node.add(op_type="Resize", input=["R", "", "scales"], output=["Y"], name="resize",
               attribute=[pb.AttributeProto(name="mode", s=b"nearest", type=3)])
    for name in ("W", "B", "D", "E", "V", "shape", "scales"):
        g.initializer.append(tensor(name, v[name], form, folder))
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def read_tensor(t, folder):
    dtype = np.dtype(NUMPY[t.data_type])
    shape = tuple(t.dims)
    if t.data_location == 1:
        e = {x.key: x.value for x in t.external_data}
        assert "/" not in e["location"], e
        with open(os.path.join(folder, e["location"]), "rb") as f:
            f.seek(int(e.get("offset", "0")))
            a = np.frombuffer(f.read(int(e["length"])), dtype)
    elif t.HasField("raw_data"):
        a = np.frombuffer(t.raw_data, dtype)
    elif dtype == np.float32:
        a = np.array(t.float_data, dtype)
    elif dtype == np.float64:
        a = np.array(t.double_data, dtype)
    elif dtype == np.int64:
        a = np.array(t.int64_data, dtype)
    else:
        a = np.array(t.int32_data, np.int32).astype(np.uint16).view(dtype)
    return a.reshape(shape)


def tensors(path):
    """Every initializer and every Constant node's value of the model at `path`, by name."""
    m, folder = load(path), os.path.dirname(os.path.abspath(path))
    out = {t.name: read_tensor(t, folder) for t in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "Constant":
            out[n.output[0]] = read_tensor(n.attribute[0].t, folder)
    return out


def form(path, name):
    """How the tensor `name` (an initializer) is stored: raw, typed or external."""
    for t in load(path).graph.initializer:
        if t.name == name:
            return "external" if t.data_location == 1 else "raw" if t.HasField("raw_data") else "typed"


def skeleton(path):
    """The model without its tensors' values and metadata_props: what a merge must keep as input 1's."""
    m = load(path)
    ts = list(m.graph.initializer) + [n.attribute[0].t for n in m.graph.node if n.op_type == "Constant"]
    for t in ts:
        for f in ("raw_data", "float_data", "int32_data", "int64_data", "double_data", "external_data",
                  "data_location"):
            t.ClearField(f)
    m.ClearField("metadata_props")
    return m


def mean(arrays):
    """numpy's float64 mean rounded once to the arrays' type."""
    return np.mean(np.stack(arrays).astype(np.float64), axis=0).astype(arrays[0].dtype)


if __name__ == "__main__":
    # onnx_tools.py make PATH SEED FORM
    make(sys.argv[2], int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else "raw")
