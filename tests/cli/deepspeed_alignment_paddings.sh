# A ZeRO stage 2 checkpoint of a bf16 run with parameter_alignment (samples/deepspeed/aligned, checked by
# DeepSpeed's zero_to_fp32 when made): the zeros after each parameter (param_alignment_paddings) are skipped, in
# both param groups, and the tied lm_head.weight gets emb.weight's values. numpy checks the closed forms; with
# WAVG_TORCH2_PYTHON (deepspeed installed), DeepSpeed's own zero_to_fp32 must give the same tensors.
"$WAVG" convert -q "$SAMPLES"/deepspeed/aligned -o out.safetensors
/usr/bin/python3 - <<'PYTHON'
import json, struct
import numpy as np
with open("out.safetensors", "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
header.pop("__metadata__", None)
shapes = {"emb.weight": (3, 5), "ln.bias": (4,), "head.bias": (6,), "fc.weight": (2, 7), "fc.bias": (6,)}
want = {name: p + 1 + np.arange(np.prod(s)).reshape(s) / 16 for p, (name, s) in enumerate(shapes.items())}
want["lm_head.weight"] = want["emb.weight"]
want["scale"] = np.arange(5) / 8
assert sorted(header) == sorted(want), sorted(header)
for name, w in want.items():
    h = header[name]
    got = np.frombuffer(data[h["data_offsets"][0]:h["data_offsets"][1]], dtype="<f4").reshape(h["shape"])
    assert np.array_equal(got, w.astype(np.float32)), (name, got)
print("ok")
PYTHON
PY=${WAVG_TORCH2_PYTHON:-}
if [ -n "$PY" ] && "$PY" -c 'import deepspeed.utils.zero_to_fp32' >/dev/null 2>&1; then
  "$PY" - "$SAMPLES"/deepspeed/aligned <<'PYTHON' 2>/dev/null
import contextlib, io, sys, torch
from safetensors.torch import load_file
with contextlib.redirect_stdout(io.StringIO()):  # DeepSpeed reports on stdout
    from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint as consolidate
    want = consolidate(sys.argv[1])
out = load_file("out.safetensors")
assert sorted(out) == sorted(want)
for name, t in out.items():
    assert torch.equal(t, want[name]), name
PYTHON
fi
