# Optional: torch.distributed.checkpoint reads wavg's DCP outputs from non-DCP inputs. Needs a Python with torch >= 2.4
# (PyPI), named by WAVG_TORCH2_PYTHON; skipped without one. A .pt of float32, bfloat16, float16, int64, bool, a
# scalar (tests/dcp/fresh_values.py) and uint16 (torch 2's _rebuild_tensor_v3), converted to DCP: dcp.load into
# tensors of the right shapes and dtypes and dcp_to_torch_save both give exactly the input's values. A two-rank DCP input 1 (samples/dcp) with --out-dtype bf16
# is written afresh: dcp_to_torch_save rebuilds input 1's nesting and param_groups, every weight bfloat16.
PY=${WAVG_TORCH2_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import torch.distributed.checkpoint' 2>/dev/null ||
  { echo "no WAVG_TORCH2_PYTHON with torch >= 2.4"; exit 77; }
R="$SAMPLES"/dcp/run
"$PY" - <<'PYTHON'
import os
import sys

sys.path.insert(0, os.environ["ROOT"] + "/tests/dcp")
import numpy as np
import torch
from fresh_values import values

sd = {}
for name, (dtype, a) in values().items():
    t = torch.from_numpy(a.astype(np.int16) if dtype == "BF16" else a.copy())
    sd[name] = t.view(torch.bfloat16) if dtype == "BF16" else t
sd["counts"] = torch.tensor([0, 1, 65535], dtype=torch.uint16)
torch.save(sd, "ref.pt")
PYTHON
"$WAVG" convert -q ref.pt -o ck/ --format dcp
"$WAVG" merge -q "$R"/step-300 "$R"/step-100 -o bf/ --out-dtype bf16
"$PY" - <<'PYTHON' 2>/dev/null
import warnings
warnings.simplefilter("ignore")
import numpy as np
import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.format_utils import dcp_to_torch_save

ref = torch.load("ref.pt")
sd = {k: torch.empty_like(v) for k, v in ref.items()}
dcp.load(sd, checkpoint_id="ck", no_dist=True)
for k, v in ref.items():
    assert sd[k].dtype == v.dtype and torch.equal(sd[k], v), k
dcp_to_torch_save("ck", "ck.pt")
d = torch.load("ck.pt")
assert list(d) == list(ref), list(d)
for k, v in ref.items():
    assert d[k].dtype == v.dtype and torch.equal(d[k], v), k

dcp_to_torch_save("bf", "bf.pt")
d = torch.load("bf.pt", weights_only=False)
shapes = {"fc1.weight": (5, 3), "fc1.bias": (5,), "fc2.weight": (4, 5), "fc2.bias": (4,)}
for name, t in d["model"].items():  # the mean of the closed forms at 3 and 1 (samples/dcp/make_dcp.py), as bf16
    if name == "scale":
        want = 2 + np.arange(5) / 8
    else:
        want = 2 + list(shapes).index(name) + np.arange(int(np.prod(shapes[name]))).reshape(shapes[name]) / 16
    assert t.dtype == torch.bfloat16, (name, t.dtype)
    assert torch.equal(t, torch.from_numpy(want.astype(np.float32)).to(torch.bfloat16)), name
assert d["optim"]["param_groups"][0]["lr"] == 0.003 and d["optim"]["state"]["0"]["step"].item() == 300, d["optim"]
print("ok")
PYTHON
ls -A ck bf
