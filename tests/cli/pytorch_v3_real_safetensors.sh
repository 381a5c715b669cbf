# Optional: a third-party safetensors file with uint16 and uint32 tensors beside seven other dtypes
# (shared/real-checkpoints/hf-safetensors-dtype-samples/overall.safetensors) converts to a .pt that torch.load
# (weights_only=True) reads back with every dtype, shape and byte of safetensors' own load_file (before, the convert
# was refused: a .pt had no uint16). Needs ../shared and WAVG_TORCH2_PYTHON (torch >= 2.3 and safetensors).
R=$SHARED/real-checkpoints/hf-safetensors-dtype-samples
[ -f "$R"/overall.safetensors ] || { echo "no $R"; exit 77; }
PY=${WAVG_TORCH2_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import torch, safetensors; torch.uint16' 2>/dev/null ||
  { echo "no WAVG_TORCH2_PYTHON with torch >= 2.3 and safetensors"; exit 77; }
"$WAVG" convert -q "$R"/overall.safetensors -o overall.pt
"$PY" - "$R"/overall.safetensors <<'PYTHON'
import sys
import torch
from safetensors.torch import load_file
ref = load_file(sys.argv[1])
got = torch.load("overall.pt", weights_only=True)
assert sorted(got) == sorted(ref), sorted(got)
assert {torch.uint16, torch.uint32} <= {t.dtype for t in ref.values()}
for name, t in ref.items():
    assert got[name].dtype == t.dtype and got[name].shape == t.shape, name
    assert torch.equal(got[name].view(torch.uint8), t.view(torch.uint8)), name
print(", ".join(f"{n} {str(ref[n].dtype)[6:]}" for n in sorted(ref)))
PYTHON
