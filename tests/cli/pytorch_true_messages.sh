# Files the PyTorch codec does not read are named for what they are (issues 25 and 26), one line each, exit 1: a
# TorchScript archive (torch.jit.save, made here by torch 1.13), a legacy torch.save file cut inside its magic
# number, one cut right after it, and a tensor of a dtype wavg has no type for: a quantized quint8 (complex64 is
# read since, pytorch_complex).
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import torch
torch.jit.script(torch.nn.Linear(2, 2)).save("script.pt")
torch.save({"w": torch.ones(2)}, "legacy.pt", _use_new_zipfile_serialization=False)
data = open("legacy.pt", "rb").read()
open("cut12.pt", "wb").write(data[:12])
open("cut15.pt", "wb").write(data[:15])
torch.save({"q": torch.quantize_per_tensor(torch.ones(3), 0.1, 0, torch.quint8)}, "quint8.pt")
PY
for f in script cut12 cut15 quint8; do
  "$WAVG" inspect $f.pt && echo "$f: exit 0" || echo "$f: exit $?"
done
