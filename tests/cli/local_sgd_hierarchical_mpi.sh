# Hierarchical local SGD, 4 workers in groups of 2: averages within each group every 2 steps and over all 4 every
# 6. Under mpirun -np 4 (the groups are MPI_Comm_split communicators) the final weights equal the one-process
# driver's bit for bit, and both differ from flat averaging every 2 and every 6 steps. --stats counts, per round,
# two group averages (reduce-scatter over 2 ranks: each of the 2 ranks of a group sends 1 model's worth, so 4 in
# all) and one global one (over 4 ranks: 2(K-1) = 6 models' worth in all): 14 models per round, 42 in 3 rounds,
# 24 of them within groups.
. "$ROOT/tests/support/mpi_env.sh"
args="--data $SAMPLES/digits/digits.csv.gz --hidden 16 --workers 4 --period 2 --batch 8 -q"
"$WAVG" local-sgd $args --rounds 3 --group-size 2 --group-period 6 --out-dir one
mpirun --oversubscribe -np 4 "$WAVG" local-sgd $args --rounds 3 --group-size 2 --group-period 6 --backend mpi \
  --out-dir mpi --stats stats.json
"$WAVG" local-sgd $args --rounds 9 --out-dir flat2
"$WAVG" local-sgd ${args/--period 2/--period 6} --rounds 3 --out-dir flat6
/usr/bin/python3 - <<'PY'
import json, h5py, numpy as np
names = ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
def load(d):
    f = h5py.File(d + "/final.h5", "r")
    return [f[n][()] for n in names]
one, mpi, flat2, flat6 = load("one"), load("mpi"), load("flat2"), load("flat6")
for n, a, b in zip(names, one, mpi):
    assert a.tobytes() == b.tobytes(), n
for flat in (flat2, flat6):
    assert max(np.abs(a - b).max() for a, b in zip(one, flat)) > 1e-6
model = 8 * (64 * 16 + 16 + 16 * 10 + 10)  # the MLP averages in float64
s = json.load(open("stats.json"))
assert s["ranks"] == 4 and s["averaged_bytes"] == 3 * 3 * model, s
assert sum(r["bytes_sent"] for r in s["per_rank"]) == 42 * model, s
assert sum(r["bytes_received"] for r in s["per_rank"]) == 42 * model, s
assert sum(r["in_groups"]["bytes_sent"] for r in s["per_rank"]) == 24 * model, s
# rounds x averages x tensors x 2(G-1)
assert all(r["in_groups"]["messages"] == 3 * 2 * 4 * 2 for r in s["per_rank"]), s
print("bit-identical to one process; differs from flat H = 2 and H = 6; 42 models' worth sent, 24 within groups")
PY
cut -d, -f1,2 mpi/log.csv | tail -1
