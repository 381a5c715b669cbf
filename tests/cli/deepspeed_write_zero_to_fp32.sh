# Optional: DeepSpeed's own zero_to_fp32 consolidates the DeepSpeed folder wavg wrote (the last two checkpoints of
# each engine sample run, -o avg/) into what wavg's -o avg.safetensors of the same inputs holds, tensor for tensor
# (the parameters' fp32 masters and the buffers; the safetensors file also holds Adam's moments and step). Needs
# WAVG_TORCH2_PYTHON with deepspeed.
PY=${WAVG_TORCH2_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import deepspeed.utils.zero_to_fp32' >/dev/null 2>&1 ||
  { echo "no WAVG_TORCH2_PYTHON with deepspeed"; exit 77; }
for s in zero2 zero3; do
  "$WAVG" merge -q --last 2 "$SAMPLES"/deepspeed/engine/$s -o $s/
  "$WAVG" merge -q --last 2 "$SAMPLES"/deepspeed/engine/$s -o $s.safetensors
  "$PY" - $s <<'PYTHON' 2>/dev/null
import contextlib, io, sys, torch
from safetensors.torch import load_file
with contextlib.redirect_stdout(io.StringIO()):  # DeepSpeed and zero_to_fp32 report on stdout
    from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint as consolidate
    got = consolidate(".", tag=sys.argv[1])
want = load_file(sys.argv[1] + ".safetensors")
assert list(got) == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"], list(got)
for name, t in got.items():
    assert t.dtype == want[name].dtype and torch.equal(t, want[name]), name
print("ok", sys.argv[1])
PYTHON
done
