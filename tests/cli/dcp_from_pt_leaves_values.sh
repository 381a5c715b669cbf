# A DCP folder output from a .pt checkpoint (torch 1.13's torch.save): its tensors as in dcp_from_safetensors
# (tests/dcp/check_fresh.py), its non-tensor values (an epoch, a run name) left out with one warning, listed by -v;
# DCP could keep them (BytesStorageMetadata), but wavg does not write a Python value's pickle from scratch.
/usr/bin/python3 - <<'PYTHON'
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
sd["epoch"] = 3
sd["run"] = "r1"
torch.save(sd, "in.pt")
PYTHON
"$WAVG" convert in.pt -o ck/ --format dcp -v 2>&1 | grep -v '^wavg: device'
/usr/bin/python3 "$ROOT"/tests/dcp/check_fresh.py ck
