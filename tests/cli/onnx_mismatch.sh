# ONNX models of different graphs (a wider Gemm weight, an initializer only one has) are refused by the usual
# mismatch report, every difference at once, before anything is written.
T=$ROOT/tests/cli/onnx_tools.py
/usr/bin/python3 "$T" make a.onnx 1 raw
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
import onnx_tools as ot
m = ot.load("a.onnx")
for t in m.graph.initializer:
    if t.name == "W":
        t.dims[:] = [3, 5]
        t.raw_data = np.zeros((3, 5), np.float32).tobytes()
extra = m.graph.initializer.add()
extra.CopyFrom(ot.tensor("extra", np.ones(2, np.float32), "raw"))
open("wide.onnx", "wb").write(m.SerializeToString())
PY
"$WAVG" merge a.onnx wide.onnx -o out.onnx
