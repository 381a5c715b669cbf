# Without -j or OMP_NUM_THREADS a merge takes the cores no other program uses now (at least one), and the plain mean
# at most half the cores while the fingerprint's threads run beside it (a memory-bound merge; README "Performance");
# -vv says how many. -j and OMP_NUM_THREADS decide when given. The output is the same bytes whatever the count, and
# numpy's mean.
unset OMP_NUM_THREADS
M="$SAMPLES"/mlp
cores=$(nproc)
# "wavg: W worker thread(s) of C cores, F free...": W as the rule says from C and F, 1 <= F <= C.
chosen() {
  /usr/bin/python3 - "$1" "$cores" "$2" <<'PY'
import re, sys
text, cores, mean = open(sys.argv[1]).read(), int(sys.argv[2]), sys.argv[3] == "mean"
lines = re.findall(r"wavg: (\d+) worker thread\(s\) of (\d+) cores, (\d+) free(.*)", text)
assert len(lines) == 1, text
w, c, f, rest = int(lines[0][0]), int(lines[0][1]), int(lines[0][2]), lines[0][3]
assert c == cores and 1 <= f <= c, lines
assert w == (max(1, min(f, c // 2)) if mean else f), lines
assert ("the mean is bound by memory" in rest) == mean, rest
print("ok")
PY
}
"$WAVG" merge -vv "$M"/node1.h5 "$M"/node2.h5 -o half.h5 2>err.txt
echo "mean with a fingerprint: $(chosen err.txt mean)"
"$WAVG" merge -vv --hash none "$M"/node1.h5 "$M"/node2.h5 -o nohash.h5 2>err3.txt
echo "mean without: $(chosen err3.txt other)"
"$WAVG" merge -vv --method median "$M"/node1.h5 "$M"/node2.h5 "$M"/node3.h5 -o median.h5 2>err4.txt
echo "median: $(chosen err4.txt other)"
"$WAVG" merge -vv -j1 "$M"/node1.h5 "$M"/node2.h5 -o one.h5 2>err1.txt
OMP_NUM_THREADS=2 "$WAVG" merge -vv "$M"/node1.h5 "$M"/node2.h5 -o env.h5 2>err2.txt
echo "-j1 and OMP_NUM_THREADS: $(cat err1.txt err2.txt | grep -c 'worker thread(s) of' || true) lines"
/usr/bin/python3 - "$M" <<'PY'
import sys
import h5py
import numpy as np
m = sys.argv[1]
def arrays(path):
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda k, v: out.__setitem__(k, v[()]) if isinstance(v, h5py.Dataset) else None)
    return out
a, b = arrays(f"{m}/node1.h5"), arrays(f"{m}/node2.h5")
for out in ("half.h5", "one.h5", "env.h5", "nohash.h5"):
    got = arrays(out)
    for k, v in a.items():
        if v.dtype.kind == "f":
            want = ((v.astype(np.float64) + b[k].astype(np.float64)) / 2).astype(v.dtype)
            assert np.array_equal(got[k], want), (out, k)
print("every output is numpy's mean")
PY
