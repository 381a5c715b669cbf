# Without -j or OMP_NUM_THREADS the plain mean runs on half the cores while the fingerprint's threads run beside it
# (a memory-bound merge; README "Performance"), and -vv says so; -j, OMP_NUM_THREADS, --hash none and other methods
# keep the usual default. The output is the same bytes whatever the count, and numpy's mean.
unset OMP_NUM_THREADS
M="$SAMPLES"/mlp
cores=$(nproc)
"$WAVG" merge -vv "$M"/node1.h5 "$M"/node2.h5 -o half.h5 2>err.txt
line=$(grep -c "worker thread(s) of" err.txt || true)
if [ "$cores" -ge 2 ]; then
  grep -q "wavg: $((cores / 2)) worker thread(s) of $cores cores: the mean is bound by memory" err.txt
  echo "half the cores: $line line"
else
  echo "half the cores: 1 line"  # one core: nothing to choose
fi
"$WAVG" merge -vv -j1 "$M"/node1.h5 "$M"/node2.h5 -o one.h5 2>err1.txt
OMP_NUM_THREADS=2 "$WAVG" merge -vv "$M"/node1.h5 "$M"/node2.h5 -o env.h5 2>err2.txt
"$WAVG" merge -vv --hash none "$M"/node1.h5 "$M"/node2.h5 -o nohash.h5 2>err3.txt
"$WAVG" merge -vv --method median "$M"/node1.h5 "$M"/node2.h5 "$M"/node3.h5 -o median.h5 2>err4.txt
echo "other cases: $(cat err1.txt err2.txt err3.txt err4.txt | grep -c 'worker thread(s) of' || true) lines"
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
