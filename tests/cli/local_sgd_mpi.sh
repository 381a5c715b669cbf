# Under mpirun with 4 ranks the MPI driver's final weights equal the single-process driver's bit for bit.
grep -q "built without MPI" "$WAVG" && { echo "wavg built without MPI"; exit 77; }
command -v mpirun >/dev/null || { echo "no mpirun"; exit 77; }
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
# Open MPI's plugins are dlopen'ed and unloaded, so LeakSanitizer (in the sanitize suite) cannot even name what
# they keep until exit; leak checks stay on for every other test.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
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
