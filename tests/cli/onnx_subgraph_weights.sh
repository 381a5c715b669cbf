# Optional (WAVG_ONNX_PYTHON with onnx and onnxruntime, as onnx_runtime_loads): the initializers of subgraphs are
# weights like the main graph's. Two models built by onnx.helper with an If whose then-branch holds a float weight
# and an int64 shape and whose else-branch holds a Loop whose body holds another float weight, merge; onnx.checker
# accepts the output, and onnxruntime's outputs for both branches equal, bit for bit, those of input 1's model with
# every float initializer (main graph and subgraphs) replaced by numpy's float64 mean rounded to float32, the int64
# shape kept as input 1's.
PY=${WAVG_ONNX_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import onnx, onnxruntime' 2>/dev/null ||
  { echo "no WAVG_ONNX_PYTHON with onnx and onnxruntime"; exit 77; }
"$PY" - <<'PY'
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

def model(values):
    init = lambda name: numpy_helper.from_array(values[name], name)
    then = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W_then"], ["m"]), helper.make_node("Reshape", ["m", "shape_then"], ["y_then"])],
        "then", [], [helper.make_tensor_value_info("y_then", TensorProto.FLOAT, [2, 3])],
        [init("W_then"), init("shape_then")])
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "W_body"], ["acc_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3])], [init("W_body")])
    other = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W_main"], ["start"]),
         helper.make_node("Loop", ["trips", "", "start"], ["y_else"], body=body)],
        "else", [], [helper.make_tensor_value_info("y_else", TensorProto.FLOAT, [2, 3])], [])
    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], "main",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [init("W_main"), init("trips")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])

def values(seed):
    r = np.random.default_rng(seed)
    return {"W_main": r.standard_normal((4, 3)).astype(np.float32),
            "W_then": r.standard_normal((4, 3)).astype(np.float32),
            "W_body": r.standard_normal((2, 3)).astype(np.float32),
            "shape_then": np.array([2, 3] if seed == 1 else [-1, 3], np.int64),
            "trips": np.array(2 + seed, np.int64)}

inputs = [values(1), values(2)]
for k, v in enumerate(inputs):
    onnx.save_model(model(v), "m%d.onnx" % (k + 1))
mean = {n: (a if a.dtype != np.float32 else
            ((inputs[0][n].astype(np.float64) + inputs[1][n]) / 2).astype(np.float32)) for n, a in inputs[0].items()}
onnx.save_model(model(mean), "want.onnx")
PY
"$WAVG" merge -q m1.onnx m2.onnx -o out.onnx
"$PY" - <<'PY'
import numpy as np
import onnx, onnxruntime as ort
onnx.checker.check_model(onnx.load("out.onnx"), full_check=True)
x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
run = lambda path, c: ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(
    None, {"c": np.array(c), "x": x})[0]
for c in (True, False):
    got, want = run("out.onnx", c), run("want.onnx", c)
    assert np.array_equal(got, want), (c, got, want)
    assert not np.array_equal(got, run("m1.onnx", c)), c
print("subgraph weights averaged: onnxruntime equals numpy's mean model in both branches")
PY
