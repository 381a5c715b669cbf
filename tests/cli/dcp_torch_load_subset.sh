# Optional: torch.distributed.checkpoint reads wavg's DCP outputs that leave tensors out (rank files of the kept
# chunks, a fresh .metadata). Needs a Python with torch >= 2.4 (PyPI), named by WAVG_TORCH2_PYTHON; skipped without
# one. dcp.load fills a state dict of only the kept keys (the two-rank input 1 without fc1; Adam's moments dropped),
# and dcp_to_torch_save (which rebuilds the nesting from planner_data) gives exactly the kept tensors and input 1's
# param_groups; every value equals the numpy mean of the samples' closed forms (samples/dcp/make_dcp.py).
PY=${WAVG_TORCH2_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import torch.distributed.checkpoint' 2>/dev/null ||
  { echo "no WAVG_TORCH2_PYTHON with torch >= 2.4"; exit 77; }
R="$SAMPLES"/dcp/run
"$WAVG" merge -q "$R"/step-300 "$R"/step-100 "$R"/step-200 -o nofc1/ --exclude 'model.fc1.*'
"$WAVG" merge -q "$R"/step-100 "$R"/step-200 -o nomoments/ --optimizer-state drop
"$PY" - <<'PYTHON' 2>/dev/null
import warnings
warnings.simplefilter("ignore")
import numpy as np
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

SHAPES = {"fc1.weight": (5, 3), "fc1.bias": (5,), "fc2.weight": (4, 5), "fc2.bias": (4,)}


def mean(ks, p, base, step, shape):
    i = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    return np.mean([base(k) + p + i * step for k in ks], axis=0).astype(np.float32)


def weight(ks, name):
    if name == "scale":
        return mean(ks, 0, float, 1 / 8, (5,))
    return mean(ks, list(SHAPES).index(name), float, 1 / 16, SHAPES[name])


sd = {"model": {n: torch.zeros(s) for n, s in SHAPES.items() if not n.startswith("fc1")}}
sd["model"]["scale"] = torch.zeros(5)
dcp.load(sd, checkpoint_id="nofc1", no_dist=True)
for name, t in sd["model"].items():
    assert np.array_equal(t.numpy(), weight((3, 1, 2), name)), name
try:  # the left-out tensor is not in the checkpoint (CheckpointException derives from BaseException)
    dcp.load({"model": {"fc1.weight": torch.zeros(5, 3)}}, checkpoint_id="nofc1", no_dist=True)
    read = True
except BaseException as e:
    assert "Missing key in checkpoint state_dict: model.fc1.weight" in str(e), e
    read = False
assert not read, "fc1.weight was read"

dcp_to_torch_save("nomoments", "nomoments.pt")
d = torch.load("nomoments.pt", weights_only=False)
assert sorted(d["model"]) == sorted(list(SHAPES) + ["scale"]), d["model"].keys()
for name, t in d["model"].items():
    assert np.array_equal(t.numpy(), weight((1, 2), name)), name
assert sorted(d["optim"]["state"]) == ["0", "1", "2", "3"], d["optim"]["state"].keys()
for st in d["optim"]["state"].values():
    assert list(st) == ["step"] and st["step"].item() == 100, st  # a counter: input 1's
assert d["optim"]["param_groups"][0]["lr"] == 0.001, d["optim"]["param_groups"]
print("ok")
PYTHON
ls -A nofc1 nomoments
