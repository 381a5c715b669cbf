# wavg allreduce over 3 ranks on tensors 3 does not divide, one of them two reduce-scatter chunks long (3,221,989
# floats; a chunk is 3 x 4 MiB), with both --algorithm reduce-scatter and gather, and over 1 rank: every output is
# numpy's mean (float64 sum in rank order, divided once, rounded once); --stats shows reduce-scatter sending
# 2(K-1)/K of the model (within 5%) and gather (K-1) times it.
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
rng = np.random.default_rng(3)
for r in range(3):
    with h5py.File(f"n{r}.h5", "w") as f:
        f["big"] = rng.standard_normal((1789, 1801)).astype(np.float32) * (r + 1)
        f["five"] = rng.standard_normal(5).astype(np.float32)
        f["two"] = rng.standard_normal(2).astype(np.float32)
        f["one"] = rng.standard_normal(1).astype(np.float32)
        f["wide"] = rng.standard_normal(10) * 1e300  # float64 stays float64
        f["step"] = np.array([r + 5], dtype=np.int64)  # not averaged: rank 0's
PY
mpirun --oversubscribe -np 3 "$WAVG" allreduce 'n{rank}.h5' -o rs.h5 --stats rs.json -q
mpirun --oversubscribe -np 3 "$WAVG" allreduce 'n{rank}.h5' -o ga.h5 --stats ga.json --algorithm gather -q
mpirun --oversubscribe -np 1 "$WAVG" allreduce 'n{rank}.h5' -o one.h5 --stats one.json -q
/usr/bin/python3 - <<'PY'
import json, h5py, numpy as np
ins = [h5py.File(f"n{r}.h5", "r") for r in range(3)]
names = ["big", "five", "two", "one", "wide"]
def mean(files, n):
    acc = files[0][n][()].astype(np.float64)
    for f in files[1:]:
        acc = acc + f[n][()]
    return (acc / len(files)).astype(files[0][n].dtype)
for path, files in [("rs.h5", ins), ("ga.h5", ins), ("one.h5", ins[:1])]:
    out = h5py.File(path, "r")
    for n in names:
        assert out[n][()].tobytes() == mean(files, n).tobytes(), (path, n)
    assert out["step"][()].tolist() == [5], path
model = sum(ins[0][n][()].nbytes for n in names)
for path, low, high in [("rs.json", 4 / 3, 1.05 * 4 / 3), ("ga.json", 2, 2), ("one.json", 0, 0)]:
    s = json.load(open(path))
    assert s["averaged_bytes"] == model, s
    for r in s["per_rank"]:
        assert low * model * 0.999 <= r["bytes_sent"] <= high * model, (path, r)
        assert low * model * 0.999 <= r["bytes_received"] <= high * model, (path, r)
print([r["messages"] for r in json.load(open("rs.json"))["per_rank"]],
      [r["messages"] for r in json.load(open("ga.json"))["per_rank"]])
print("3 ranks (both algorithms) and 1 rank: numpy's mean; bytes moved as expected")
PY
