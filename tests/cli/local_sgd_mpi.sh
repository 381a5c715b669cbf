# Under mpirun with 4 ranks the MPI driver's final weights equal the single-process driver's bit for bit.
. "$ROOT/tests/support/mpi_env.sh"
args="--data $SAMPLES/digits/digits.csv.gz --hidden 16 --workers 4 --period 4 --rounds 5 --batch 8 -q"
"$WAVG" local-sgd $args --out-dir one
mpirun --oversubscribe -np 4 "$WAVG" local-sgd $args --backend mpi --out-dir mpi
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
a, b = h5py.File("one/final.h5", "r"), h5py.File("mpi/final.h5", "r")
for n in ["dense/kernel", "dense/bias", "dense_1/kernel", "dense_1/bias"]:
    assert a[n][()].tobytes() == b[n][()].tobytes(), n
print("bit-identical")
PY
cut -d, -f1,2 mpi/log.csv | tail -1
