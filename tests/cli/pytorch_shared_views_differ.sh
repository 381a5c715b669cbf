# Views of one storage that overlap in input 1 (a = base[0:6] and b = base[2:8]; w and w.t()), written by torch,
# that input 2 holds apart with other values: the means differ on the shared elements, so a .pt output (which keeps
# input 1's storages) is refused naming both, exit 3, nothing written, where it once wrote b's mean over a's. So is
# a weight whose mean would change an optimizer moment it overlaps that --optimizer-state first keeps. A
# safetensors output holds them apart: numpy's means.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import torch
base = torch.arange(8, dtype=torch.float32)
torch.save({"a": base[0:6], "b": base[2:8]}, "s1.pt")
torch.save({"a": torch.arange(6.0) + 100, "b": torch.arange(6.0) + 200}, "s2.pt")
w = torch.arange(6, dtype=torch.float32).reshape(2, 3)
torch.save({"w": w, "wt": w.t()}, "t1.pt")
torch.save({"w": w + 10, "wt": torch.arange(6.0).reshape(3, 2) * 3}, "t2.pt")
for k in (1, 2):
    base = torch.arange(8, dtype=torch.float32) * k
    opt = {"state": {0: {"exp_avg": base[2:8]}}, "param_groups": [{"lr": 0.1, "params": [0]}]}
    torch.save({"model": {"w": base[0:6]}, "optimizer": opt}, f"o{k}.pt")
PY
"$WAVG" merge -q s1.pt s2.pt -o s.pt || echo "s.pt: exit $?"
"$WAVG" merge -q t1.pt t2.pt -o t.pt || echo "t.pt: exit $?"
"$WAVG" merge -q o1.pt o2.pt --optimizer-state first -o o.pt || echo "o.pt: exit $?"
[ ! -e s.pt ] && [ ! -e t.pt ] && [ ! -e o.pt ] || { echo "an output was written"; exit 1; }
"$WAVG" merge -q s1.pt s2.pt -o s.safetensors
"$WAVG" merge -q t1.pt t2.pt -o t.safetensors
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import numpy as np
from safetensors_tools import load
_, s = load("s.safetensors")
base = np.arange(8, dtype=np.float64)
assert np.array_equal(s["a"], (base[0:6] + np.arange(6) + 100) / 2), s["a"]  # [50 .. 55]
assert np.array_equal(s["b"], (base[2:8] + np.arange(6) + 200) / 2), s["b"]  # [101 .. 106]
_, t = load("t.safetensors")
w = np.arange(6, dtype=np.float64).reshape(2, 3)
assert np.array_equal(t["w"], (w + w + 10) / 2), t["w"]
assert np.array_equal(t["wt"], (w.T + np.arange(6).reshape(3, 2) * 3) / 2), t["wt"]
print("safetensors: the means")
PY
