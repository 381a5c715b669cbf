# Optional: onnx.checker accepts wavg's ONNX outputs and onnxruntime runs them. Needs a Python with torch (to
# export), onnx and onnxruntime, named by WAVG_ONNX_PYTHON; skipped without one (a venv over Debian's torch 1.13:
# python3 -m venv --system-site-packages V; V/bin/pip install onnx==1.16.2 onnxruntime==1.19.2 'protobuf<5', the
# last versions that take Debian's numpy 1.24). Two exports by torch.onnx of a small CNN (Conv, BatchNorm, ReLU,
# Gemm) and two of a small transformer block (attention written out, LayerNorm decomposed at opset 13 into nodes
# with float Constants), the transformer's saved with external data by onnx.save_model, merge; the output's outputs
# equal, bit for bit, those of input 1's model with every float initializer and float Constant replaced by numpy's
# float64 mean of the inputs' rounded to float32 (integer tensors input 1's), and the transformer's output has its
# external data in OUT.data.
PY=${WAVG_ONNX_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import torch, onnx, onnxruntime' 2>/dev/null ||
  { echo "no WAVG_ONNX_PYTHON with torch, onnx and onnxruntime"; exit 77; }
"$PY" - <<'PY'
import os, subprocess
import numpy as np
import onnx, onnxruntime as ort, torch
from onnx import numpy_helper

class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4)
        self.fc = torch.nn.Linear(4 * 6 * 6, 5)
    def forward(self, x):
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))

class Block(torch.nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
        self.norm, self.ff = torch.nn.LayerNorm(d), torch.nn.Sequential(torch.nn.Linear(d, 32), torch.nn.GELU(),
                                                                      torch.nn.Linear(32, d))
    def forward(self, x):
        a = torch.softmax(self.q(x) @ self.k(x).transpose(1, 2) / 4.0, dim=-1) @ self.v(x)
        h = self.norm(x + self.o(a))
        return h + self.ff(h)

def export(cls, seed, x, path, external):
    torch.manual_seed(seed)
    m = cls()
    for b in m.buffers():  # running statistics other than the defaults, so that the merge averages them too
        if b.dtype == torch.float32:
            b.uniform_(0.5, 1.5)
    m.eval()
    torch.onnx.export(m, x, path, opset_version=13, input_names=["x"], output_names=["y"])
    if external:
        model = onnx.load(path)
        onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=os.path.basename(path) + ".weights", size_threshold=0)

def values(model, folder):
    """Every float initializer and float Constant of the graph, by name."""
    onnx.load_external_data_for_model(model, folder)
    out = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "Constant" and n.attribute[0].name == "value":
            out[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
    return out

def reference(paths):
    """Input 1's model with the numpy means in place of its float tensors."""
    models = [onnx.load(p, load_external_data=True) for p in paths]
    vals = [values(m, ".") for m in models]
    ref = models[0]
    def mean(name, t):
        a = vals[0][name]
        if a.dtype.kind != "f":
            return t
        m = np.mean(np.stack([v[name] for v in vals]).astype(np.float64), axis=0).astype(a.dtype)
        return numpy_helper.from_array(m, t.name)
    for i, t in enumerate(ref.graph.initializer):
        ref.graph.initializer[i].CopyFrom(mean(t.name, t))
    for n in ref.graph.node:
        if n.op_type == "Constant" and n.attribute[0].name == "value":
            n.attribute[0].t.CopyFrom(mean(n.output[0], n.attribute[0].t))
    return ref.SerializeToString()

for name, cls, x, external in (("cnn", Cnn, torch.randn(2, 1, 8, 8), False),
                               ("block", Block, torch.randn(2, 5, 16), True)):
    paths = [f"{name}_{s}.onnx" for s in (1, 2, 3)]
    for s, p in zip((1, 2, 3), paths):
        export(cls, s, x, p, external)
    out = f"{name}_merged.onnx"
    subprocess.run([os.environ["WAVG"], "merge", "-q", *paths, "-o", out], check=True)
    onnx.checker.check_model(out, full_check=True)
    got = ort.InferenceSession(out, providers=["CPUExecutionProvider"]).run(None, {"x": x.numpy()})[0]
    want = ort.InferenceSession(reference(paths), providers=["CPUExecutionProvider"]).run(None, {"x": x.numpy()})[0]
    assert np.array_equal(got, want), (name, np.abs(got - want).max())
    one = ort.InferenceSession(paths[0], providers=["CPUExecutionProvider"]).run(None, {"x": x.numpy()})[0]
    assert not np.array_equal(got, one), name
    print(name, "checker and onnxruntime: equal to numpy's mean model;", "external data" if
          os.path.exists(out + ".data") else "no external data")
PY
