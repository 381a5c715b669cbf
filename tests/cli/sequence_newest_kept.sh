# --last takes what it does not average (an integer epoch counter) from the newest checkpoint, as fairseq's
# average_checkpoints.py does; --schedule over the command line's inputs (oldest first) does the same.
mkdir run
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
for n in (1, 2, 3):
    with h5py.File(f"run/round-{n:04d}.h5", "w") as f:
        f["w"] = np.array([float(n)], dtype=np.float32)
        f["epoch"] = np.array([n], dtype=np.int64)
PY
"$WAVG" merge -q --last 2 run -o last.h5
"$WAVG" merge -q run/round-0001.h5 run/round-0002.h5 run/round-0003.h5 --schedule linear -o sched.h5
/usr/bin/python3 - <<'PY'
import h5py
for name in ("last.h5", "sched.h5"):
    with h5py.File(name, "r") as f:
        print(name, "w", f["w"][0], "epoch", f["epoch"][0])
PY
