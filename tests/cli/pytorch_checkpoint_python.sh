# Training checkpoints made by torch, zip format: three merge into a .pt that torch.load opens with input 1's whole
# structure (nested state_dict, Adam state, epoch, strings, None, lists), every float tensor torch's float64 mean
# rounded once (float16, bfloat16, float64, a Fortran-order view, a 0-d tensor, overlapping views of one storage),
# the int and bool tensors input 1's. -v lists what was kept without averaging.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 "$ROOT/tests/cli/pytorch_make.py" zip 3
"$WAVG" merge c1.pt c2.pt c3.pt -o out.pt -v 2>err.txt
grep -v '^wavg: device: ' err.txt >&2
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 -c 'import pytorch_tools as t
t.check_merge("out.pt", ["c1.pt", "c2.pt", "c3.pt"]); print("torch loads it: ok")'
