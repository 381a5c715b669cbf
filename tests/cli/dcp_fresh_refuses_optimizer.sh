# A DCP folder made from a non-DCP input holds tensors only: an optimizer's moments from a .pt training checkpoint
# would land there without its param_groups (torch cannot load them into an optimizer, and wavg reading the folder
# back finds no optimizer and takes the moments for weights). Refused naming the first one, exit 1, nothing written;
# with the optimizer left out by --exclude, the model's tensors are written.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import torch
torch.manual_seed(0)
m = torch.nn.Linear(3, 2)
o = torch.optim.Adam(m.parameters(), lr=0.01)
m(torch.ones(1, 3)).sum().backward()
o.step()
torch.save({"model": m.state_dict(), "optimizer": o.state_dict()}, "ckpt.pt")
PY
set +e
"$WAVG" convert -q ckpt.pt -o out/ --format dcp
echo "with the optimizer: exit $?"
set -e
[ ! -e out ] || { echo "an output was written"; exit 1; }
"$WAVG" convert -q ckpt.pt -o out/ --format dcp --exclude 'optimizer.*'
echo "model only: exit $?"
"$WAVG" inspect --json out/ | /usr/bin/python3 -c '
import json, sys
print(sorted(t["name"] for t in json.load(sys.stdin)["tensors"]))'
