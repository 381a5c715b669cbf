# The same training checkpoints in the legacy (pre-1.6) format, views sharing storages included: the output is a
# legacy file that torch.load opens as it opens input 1, with the means computed by torch.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 "$ROOT/tests/cli/pytorch_make.py" legacy 3
"$WAVG" merge c1.pt c2.pt c3.pt -o out.pt
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 -c 'import pytorch_tools as t
t.check_merge("out.pt", ["c1.pt", "c2.pt", "c3.pt"]); print("torch loads it: ok")'
