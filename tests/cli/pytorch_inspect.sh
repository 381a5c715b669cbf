# inspect shows a training checkpoint's structure: the tensors by key path, then what is not a tensor (kept from
# input 1 by merge), as a table and in --json.
/usr/bin/python3 -c 'import torch' 2>/dev/null || { echo "python3-torch missing"; exit 77; }
/usr/bin/python3 "$ROOT/tests/cli/pytorch_make.py" zip 1
"$WAVG" inspect c1.pt
"$WAVG" inspect --json c1.pt | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["not_tensors"])'
