# An output whose name says no format takes its inputs' (issue 25): TensorFlow's own names (avg/ckpt-5,
# export/variables/variables) give a TensorFlow checkpoint and the result line names the format; .ckpt follows
# input 1, so PyTorch Lightning checkpoints (torch.save files named .ckpt) merge into a torch.save file named
# avg.ckpt that torch.load opens; a name that says nothing with inputs in two formats, and .ckpt from an input
# that is neither PyTorch nor TensorFlow, are refused asking for --format (exit 2, nothing written).
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || { echo "python3-torch or numpy missing"; exit 77; }
S=$SAMPLES/tensorflow
mkdir avg export export/variables
"$WAVG" merge "$S/tf2_a/ckpt-1" "$S/tf2_b/ckpt-2" -o avg/ckpt-5 | grep -o 'into avg/ckpt-5 (tensorflow)'
"$WAVG" merge -q "$S/tf1_a/model.ckpt-3" "$S/tf1_b/model.ckpt-6" -o export/variables/variables
"$WAVG" merge -q "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" -o plain
/usr/bin/python3 - <<'PY'
import torch
for seed in (1, 2):
    torch.manual_seed(seed)
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    torch.save({"epoch": seed, "global_step": 10 * seed, "pytorch-lightning_version": "1.9.0",
                "state_dict": net.state_dict(), "lr_schedulers": []}, f"run{seed}.ckpt")
PY
"$WAVG" merge -q run1.ckpt run2.ckpt -o avg.ckpt
"$WAVG" convert -q "$SAMPLES/mlp/node1.h5" -o node1.safetensors
for args in "node1.safetensors $SAMPLES/mlp/node2.h5 -o mixed" \
            "$SAMPLES/mlp/node1.h5 $SAMPLES/mlp/node2.h5 -o h5.ckpt"; do
  code=0
  "$WAVG" merge -q $args || code=$?
  echo "exit $code"
done
ls -A . avg export/variables
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$S" "$SAMPLES/mlp" <<'PY'
import sys
import h5py, numpy as np, torch
import tf_bundle as tb
from pytorch_tools import flatten, mean_rounded, same

s, mlp = sys.argv[1], sys.argv[2]
for a, b, out in ((s + "/tf2_a/ckpt-1", s + "/tf2_b/ckpt-2", "avg/ckpt-5"),
                  (s + "/tf1_a/model.ckpt-3", s + "/tf1_b/model.ckpt-6", "export/variables/variables")):
    a, b, out = tb.read_checkpoint(a), tb.read_checkpoint(b), tb.read_checkpoint(out)
    for n, (dtype, shape, x) in a.items():
        assert out[n][:2] == (dtype, shape), n
        if dtype in (1, 2):  # DT_FLOAT, DT_DOUBLE (tensorflow_samples.sh checks the others)
            # Adam's beta powers are counters and the learning rate a hyper-parameter: input 1's (issue 25).
            kept = "_power" in n or "learning_rate" in n
            want = x if kept else ((x.astype(np.float64) + b[n][2].astype(np.float64)) / 2).astype(x.dtype)
            assert out[n][2].tobytes() == want.tobytes(), n
with h5py.File("plain", "r") as o, h5py.File(mlp + "/node1.h5", "r") as x, h5py.File(mlp + "/node2.h5", "r") as y:
    def check(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.kind == "f":
            want = ((x[name][()].astype(np.float64) + y[name][()].astype(np.float64)) / 2).astype(obj.dtype)
            assert o[name][()].tobytes() == want.tobytes(), name
    x.visititems(check)
ins = [torch.load(f"run{i}.ckpt") for i in (1, 2)]
out = torch.load("avg.ckpt", weights_only=True)
assert out["epoch"] == 1 and out["pytorch-lightning_version"] == "1.9.0"
flat = [flatten(x) for x in ins]
for name, got in flatten(out).items():
    want = mean_rounded([f[name] for f in flat]) if got.is_floating_point() else flat[0][name]
    assert same(got, want), name
print("values ok")
PY
