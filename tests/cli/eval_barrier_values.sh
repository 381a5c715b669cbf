# eval and barrier against numpy. Every row of the CSV is the same sample (features 3 and 5, label 1), so the test
# split is that sample however the rows are shuffled, and its features scale to 0 (their range is empty); the
# network's output is then its bias chain, which numpy computes for two h5py-written MLPs and the line between them.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
for i in $(seq 20); do echo "3,5,1"; done >same.csv
/usr/bin/python3 - <<'PY' >want.txt
import h5py
import numpy as np
rng = np.random.default_rng(2)
nets = []
for path in ("a.h5", "b.h5"):
    w = {"dense/kernel": rng.standard_normal((2, 4)), "dense/bias": rng.standard_normal(4),
         "dense_1/kernel": rng.standard_normal((4, 2)), "dense_1/bias": rng.standard_normal(2)}
    with h5py.File(path, "w") as f:
        for k, v in w.items():
            f[k] = v
    nets.append(w)
def loss(w):
    logits = np.maximum(w["dense/bias"], 0) @ w["dense_1/kernel"] + w["dense_1/bias"]
    z = logits - logits.max()
    return -(z[1] - np.log(np.exp(z).sum())), float(logits.argmax() == 1)
ts = np.linspace(0, 1, 5)
line = [loss({k: (1 - t) * nets[0][k] + t * nets[1][k] for k in nets[0]}) for t in ts]
print("a.h5: test loss %.6f, accuracy %.6f" % line[0])
print("t\ttest loss\taccuracy")
for t, (l, a) in zip(ts, line):
    print("%.4f\t%.6f\t%.6f" % (t, l, a))
rise = [l - ((1 - t) * line[0][0] + t * line[-1][0]) for t, (l, _) in zip(ts, line)]
fall = [(1 - t) * line[0][1] + t * line[-1][1] - a for t, (_, a) in zip(ts, line)]
i, j = int(np.argmax(rise)), int(np.argmax(fall))
print("barrier: loss %.6f (t = %.4f), accuracy %.6f (t = %.4f)" % (max(rise[i], 0), ts[i] if rise[i] > 0 else 0,
                                                                    max(fall[j], 0), ts[j] if fall[j] > 0 else 0))
PY
"$WAVG" eval a.h5 --data same.csv --test-fraction 0.5 | sed 's/ ([0-9]* rows)$//' >got.txt
"$WAVG" barrier a.h5 b.h5 --data same.csv --test-fraction 0.5 --steps 5 >>got.txt
diff want.txt got.txt
