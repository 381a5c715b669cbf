# A view that repeats elements is as large in the output as it claims: a few hundred bytes of torch.save holding
# a stride-0 view of 10^9 float32 elements over one element (it made a 4 GB output) is refused in one line before
# anything is written, while a small expanded tensor (3 x 4 over 4 elements) still merges to numpy's mean of the
# expanded values. Written by torch.save (python3-torch), read back by tests/cli/hf_tools.py.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import torch
torch.save({"w": torch.zeros(1).expand(10**9)}, "big.pt")
torch.save({"w": torch.arange(4.0).expand(3, 4)}, "a.pt")
torch.save({"w": torch.arange(4.0, 8.0).expand(3, 4)}, "b.pt")
PY
code=0
"$WAVG" merge -q big.pt big.pt -o out.safetensors || code=$?
echo "big: exit $code"
ls out.safetensors 2>/dev/null || echo "nothing written"
"$WAVG" merge -q a.pt b.pt -o small.safetensors
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import read_safetensors
w = read_safetensors("small.safetensors")[0]["w"]
assert np.array_equal(w, np.tile(np.arange(2.0, 6.0, dtype=np.float32), (3, 1))), w
print("small: the mean of the expanded values")
PY
