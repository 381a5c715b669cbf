# What alignment is for: four digits MLPs (64-32) trained by wavg local-sgd from different seeds (so different
# initialisations), 640 steps each, averaged once. numpy scores every network on the whole digits set (features
# scaled by their range) from the weights h5py reads: the plain average of independently initialised networks is
# poor, the aligned average (weight matching for two, MergeMany for four) must reach 0.88.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
data=$SAMPLES/digits/digits.csv.gz
for s in 1 2 3 4; do
  "$WAVG" local-sgd -q --data "$data" --workers 1 --hidden 64,32 --period 640 --rounds 1 --seed $s --out-dir run$s
done
"$WAVG" merge -q --no-hash run1/final.h5 run2/final.h5 -o naive2.h5
"$WAVG" merge -q --no-hash run1/final.h5 run2/final.h5 --align weights -o aligned2.h5
"$WAVG" merge -q --no-hash run{1,2,3,4}/final.h5 -o naive4.h5
"$WAVG" merge -q --no-hash run{1,2,3,4}/final.h5 --align weights -o aligned4.h5
/usr/bin/python3 - "$data" <<'PY'
import sys
import h5py
import numpy as np
rows = np.loadtxt(sys.argv[1], delimiter=",")
x, y = rows[:, :-1], rows[:, -1].astype(int)
lo, hi = x.min(axis=0), x.max(axis=0)
x = np.where(hi > lo, (x - lo) / np.where(hi > lo, hi - lo, 1), 0)

def accuracy(path):
    with h5py.File(path, "r") as f:
        h = x
        for i in range(3):
            name = "dense" if i == 0 else f"dense_{i}"
            h = h @ f[f"{name}/kernel"][()] + f[f"{name}/bias"][()]
            if i < 2:
                h = np.maximum(h, 0)
    return float(np.mean(h.argmax(axis=1) == y))

acc = {p: accuracy(p) for p in ["run1/final.h5", "run2/final.h5", "run3/final.h5", "run4/final.h5", "naive2.h5",
                                "aligned2.h5", "naive4.h5", "aligned4.h5"]}
for p, a in acc.items():
    print(f"{p}: {a:.4f}", file=sys.stderr)
assert min(acc[f"run{s}/final.h5"] for s in (1, 2, 3, 4)) > 0.95, acc
assert acc["aligned2.h5"] >= 0.88 and acc["aligned4.h5"] >= 0.88, acc
assert acc["naive2.h5"] < acc["aligned2.h5"] - 0.1 and acc["naive4.h5"] < acc["aligned4.h5"] - 0.3, acc
PY
