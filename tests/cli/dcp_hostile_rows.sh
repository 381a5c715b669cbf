# A legal DCP folder (tests/dcp/hostile_dcp.py rows) holding one tensor in 30,000 one-row chunks, each its own
# torch.save archive (22 MB): merged with itself within 1 GiB and 20 s, where finding each chunk's storage and
# each block's chunk by scanning took O(N^2) (38 s at 50,000 chunks). Its mean is itself: w's row i is 0, 1, 2, 3.
/usr/bin/python3 "$ROOT"/tests/dcp/hostile_dcp.py rows rows 30000
/usr/bin/python3 "$ROOT"/tests/support/bounded.py 1024 20 "$WAVG" merge -q rows rows -o out.npz
/usr/bin/python3 - <<'PY'
import numpy as np
w = np.load("out.npz")["w"]
print(w.shape, bool((w == np.arange(4, dtype=np.float32)).all()))
PY
