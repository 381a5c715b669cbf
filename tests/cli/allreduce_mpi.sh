# wavg allreduce over 3 ranks holding node1..3 ({rank} in the path picks each rank's file) gives their mean, as
# numpy computes it: float64 sum in rank order, divided by 3, rounded once to float32.
. "$ROOT/tests/support/mpi_env.sh"
cp "$SAMPLES"/mlp/node1.h5 n0.h5; cp "$SAMPLES"/mlp/node2.h5 n1.h5; cp "$SAMPLES"/mlp/node3.h5 n2.h5
mpirun --oversubscribe -np 3 "$WAVG" allreduce 'n{rank}.h5' -o avg.h5
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
ins = [h5py.File(f"n{k}.h5", "r") for k in range(3)]
out = h5py.File("avg.h5", "r")
names = []
ins[0].visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
for n in names:
    x = [f[n][()] for f in ins]
    if np.issubdtype(x[0].dtype, np.floating):
        want = ((x[0].astype(np.float64) + x[1]) + x[2]) / 3
        assert np.array_equal(out[n][()], want.astype(x[0].dtype)), n
    else:
        assert np.array_equal(out[n][()], x[0]), n
print("mean of", len(names), "tensors ok")
PY
