# Views of one storage that overlap the same way in every input (a = base[0:6] and b = base[2:8]; w and w.t()),
# written by torch: the means agree on the shared elements, so a .pt output keeps input 1's sharing, and torch.load
# gives numpy's means with a and b, w and wt still views of one storage each.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import torch
for k in (1, 2, 3):
    base = torch.arange(8, dtype=torch.float32) * k
    w = torch.arange(6, dtype=torch.float32).reshape(2, 3) + 10 * k
    torch.save({"a": base[0:6], "b": base[2:8], "w": w, "wt": w.t()}, f"v{k}.pt")
PY
"$WAVG" merge -q v1.pt v2.pt v3.pt -o out.pt
/usr/bin/python3 - <<'PY'
import numpy as np
import torch
o = torch.load("out.pt")
base = np.arange(8, dtype=np.float64) * (1 + 2 + 3) / 3
w = np.arange(6, dtype=np.float64).reshape(2, 3) + 10 * (1 + 2 + 3) / 3
assert np.array_equal(o["a"].numpy(), base[0:6]) and np.array_equal(o["b"].numpy(), base[2:8])
assert np.array_equal(o["w"].numpy(), w) and np.array_equal(o["wt"].numpy(), w.T)
assert o["a"].storage().data_ptr() == o["b"].storage().data_ptr()
assert o["w"].storage().data_ptr() == o["wt"].storage().data_ptr()
print("torch loads the means, views kept")
PY
