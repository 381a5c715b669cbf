# merge --eval prints each input's score, then the merged model's.
P=/usr/bin/python3
$P - <<'PY'
import h5py, numpy as np
for v in (1, 4):
    with h5py.File(f"c{v}.h5", "w") as f:
        f["w"] = np.array([v], dtype=np.float64)
PY
"$WAVG" merge c1.h5 c4.h5 -o mean.h5 --eval "$P -c 'import sys, h5py; print(-(h5py.File(sys.argv[1])[\"w\"][0] - 3) ** 2)' {model}"
