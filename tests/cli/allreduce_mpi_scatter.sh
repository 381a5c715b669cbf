# wavg allreduce over 8 ranks (reduce-scatter + allgather, the default) on a model numpy wrote, with tensor sizes
# that 8 does not divide (1, 7, 1037, ...) and float16 beside float32: the output equals numpy's mean (float64 sum
# in rank order, divided by 8, rounded once) and `wavg merge` of the same files byte for byte, and --stats shows
# every rank sending and receiving at most 1.05 x 2(K-1)/K of the model, in 2(K-1) messages per tensor.
. "$ROOT/tests/support/mpi_env.sh"
K=8
/usr/bin/python3 - "$K" <<'PY'
import sys, h5py, numpy as np
k = int(sys.argv[1])
shapes = {"a/kernel": (1001, 1037), "a/bias": (1037,), "b/kernel": (7,), "b/bias": (1,), "c/w": (3, 5, 11),
          "d/half": (333,)}
rng = np.random.default_rng(20)
for r in range(k):
    with h5py.File(f"n{r}.h5", "w") as f:
        for name, shape in shapes.items():
            dt = np.float16 if name == "d/half" else np.float32
            f[name] = (rng.standard_normal(shape) * 10 ** rng.uniform(-3, 3, shape)).astype(dt)
PY
mpirun --oversubscribe -np $K "$WAVG" allreduce 'n{rank}.h5' -o avg.h5 --stats stats.json
"$WAVG" merge n?.h5 -o merged.h5 -q
/usr/bin/python3 - "$K" <<'PY'
import sys, json, h5py, numpy as np
k = int(sys.argv[1])
ins = [h5py.File(f"n{r}.h5", "r") for r in range(k)]
out, merged = h5py.File("avg.h5", "r"), h5py.File("merged.h5", "r")
model = 0
for n in ["a/kernel", "a/bias", "b/kernel", "b/bias", "c/w", "d/half"]:
    x = [f[n][()] for f in ins]
    acc = x[0].astype(np.float64)
    for v in x[1:]:
        acc = acc + v
    want = (acc / k).astype(x[0].dtype)
    assert out[n][()].tobytes() == want.tobytes(), n
    assert out[n][()].tobytes() == merged[n][()].tobytes(), n
    model += want.nbytes
s = json.load(open("stats.json"))
assert s["algorithm"] == "reduce-scatter" and s["ranks"] == k and s["averaged_bytes"] == model, s
limit = 1.05 * 2 * (k - 1) / k * model
for r in s["per_rank"]:
    assert r["bytes_sent"] <= limit and r["bytes_received"] <= limit, r
    assert r["bytes_sent"] >= 2 * (k - 1) / k * model * 0.95, r
    assert r["comm_seconds"] >= 0 and r["compute_seconds"] >= 0, r
assert all(r["messages"] == 6 * 2 * (k - 1) for r in s["per_rank"]), [r["messages"] for r in s["per_rank"]]
print("8 ranks: numpy's mean, merge's bytes, each rank sent <= 1.05 x 2(K-1)/K of the model")
PY
