# merge -w 1,3,2 --no-normalize is mergekit's linear without normalisation: sum_k w_k x_k (13, -13, 6.5 for
# x_k = (k, -k, k/2)), as the recipe's `normalize: false` gives, where the flag was once ignored (the normalised
# mean, exit 0). --normalize is the mean's own rule (13/6, ...). A federated method (median, or the mean with
# --base) has no such option: refused, exit 2; so are the other task-vector options given to the mean (--lambda),
# once ignored too.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "python3-numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import numpy as np
for k in (1, 2, 3):
    np.savez(f"x{k}.npz", w=np.array([k, -k, k / 2], dtype=np.float64))
PY
"$WAVG" merge -q x1.npz x2.npz x3.npz -w 1,3,2 --no-normalize -o sum.npz
"$WAVG" merge -q x1.npz x2.npz x3.npz -w 1,3,2 --normalize -o mean.npz
"$WAVG" merge -q x1.npz x2.npz x3.npz --no-normalize -o plain_sum.npz
"$WAVG" merge -q x1.npz x2.npz x3.npz --method median --no-normalize -o median.npz || echo "median: exit $?"
"$WAVG" merge -q x2.npz x3.npz --base x1.npz --no-normalize -o based.npz || echo "base: exit $?"
"$WAVG" merge -q x1.npz x2.npz --lambda 2 -o lambda.npz || echo "lambda: exit $?"
/usr/bin/python3 - <<'PY'
import numpy as np
x = [np.array([k, -k, k / 2]) for k in (1, 2, 3)]
w = [1, 3, 2]
assert np.array_equal(np.load("sum.npz")["w"], sum(wk * xk for wk, xk in zip(w, x)))  # 13, -13, 6.5
assert np.allclose(np.load("mean.npz")["w"], sum(wk * xk for wk, xk in zip(w, x)) / 6, rtol=0, atol=1e-15)
assert np.array_equal(np.load("plain_sum.npz")["w"], x[0] + x[1] + x[2])
print("sum_k w_k x_k; the mean with --normalize")
PY
