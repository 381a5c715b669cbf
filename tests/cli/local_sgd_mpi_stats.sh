# local-sgd --backend mpi over 3 ranks (3 does not divide the MLP's 16- and 10-element layers) gives the
# single-process driver's final weights bit for bit, and --stats counts 3 averages of the model, each rank sending
# and receiving at most 1.05 x 2(K-1)/K of it.
. "$ROOT/tests/support/mpi_env.sh"
args="--data $SAMPLES/digits/digits.csv.gz --hidden 16 --workers 3 --period 4 --rounds 3 --batch 8 -q"
"$WAVG" local-sgd $args --out-dir one
mpirun --oversubscribe -np 3 "$WAVG" local-sgd $args --backend mpi --out-dir mpi --stats stats.json
/usr/bin/python3 - <<'PY'
import json, h5py, numpy as np
a, b = h5py.File("one/final.h5", "r"), h5py.File("mpi/final.h5", "r")
names = ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]
for n in names:
    assert a[n][()].tobytes() == b[n][()].tobytes(), n
model = 8 * (64 * 16 + 16 + 16 * 10 + 10)  # the MLP averages in float64
s = json.load(open("stats.json"))
assert s["ranks"] == 3 and s["averaged_bytes"] == 3 * model, s
for r in s["per_rank"]:
    assert r["bytes_sent"] <= 1.05 * 4 / 3 * 3 * model and r["bytes_received"] <= 1.05 * 4 / 3 * 3 * model, r
    assert r["messages"] == 3 * 4 * 2 * 2, r
print("bit-identical; 3 averages, each rank within 5% of 2(K-1)/K of the model")
PY
