# Optional: DeepSpeed's own zero_to_fp32 consolidates each sample checkpoint; torch's float64 mean of those, rounded
# once to float32, equals wavg's streamed merge of the ZeRO folders. Needs WAVG_TORCH2_PYTHON with deepspeed.
PY=${WAVG_TORCH2_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import deepspeed.utils.zero_to_fp32' >/dev/null 2>&1 ||
  { echo "no WAVG_TORCH2_PYTHON with deepspeed"; exit 77; }
D="$SAMPLES"/deepspeed/run
"$WAVG" merge -q "$D"/global_step1000 "$D"/global_step2000 "$D"/global_step3000 -o avg.safetensors
"$PY" - "$D" <<'PYTHON' 2>/dev/null
import contextlib, io, sys, torch
from safetensors.torch import load_file
with contextlib.redirect_stdout(io.StringIO()):  # DeepSpeed and zero_to_fp32 report on stdout
    from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint as consolidate
    ins = [consolidate(sys.argv[1], tag=f"global_step{k}000") for k in (1, 2, 3)]
out = load_file("avg.safetensors")
assert sorted(out) == sorted(ins[0])
for name, t in out.items():
    assert torch.equal(t, torch.stack([x[name].double() for x in ins]).mean(0).float()), name
print("ok")
PYTHON
