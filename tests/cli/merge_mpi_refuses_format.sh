# Under mpirun -np 2 an output no rank can write in place (HDF5, here) is refused once, exit 2, before any input is
# read for values: the single-process merge writes it.
. "$ROOT/tests/support/mpi_env.sh"
cp "$SAMPLES"/mlp/node1.h5 "$SAMPLES"/mlp/node2.h5 .
set +e
mpirun --oversubscribe -np 2 "$WAVG" merge node1.h5 node2.h5 -o out.h5 2>ranks.err
echo "2 ranks: exit $?"
grep '^wavg' ranks.err
ls -A | grep -c 'out\|\.wavg-' || true
