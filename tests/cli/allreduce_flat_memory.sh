# wavg allreduce streams: a 48 MiB tensor (twelve times its 4 MiB block) raises no rank's peak resident memory by
# more than 40 MiB over a 40-byte model, where reading each tensor whole took twice the tensor's size (96 MiB). The
# margin over the blocks is the input fingerprint's lead: it hashes the engine's own mapping up to 8 MiB ahead of
# the engine, and those mapped page-cache pages count in the resident set. The mean is
# numpy's (float64 sum in rank order, rounded once to float32); the int64 counter is rank 0's.
grep -q "built without MPI" "$WAVG" && { echo "wavg built without MPI"; exit 77; }
command -v mpirun >/dev/null || { echo "no mpirun"; exit 77; }
[ -x /usr/bin/time ] || { echo "no /usr/bin/time"; exit 77; }
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"  # as in allreduce_mpi.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
for size, prefix in ((10, "small"), (12 << 20, "big")):
    for r in range(2):
        with h5py.File(f"{prefix}{r}.h5", "w") as f:
            f["w"] = (np.arange(size, dtype=np.int64) % (7 + r)).astype(np.float32)
            f["step"] = np.int64(5 + r)
PY
peak() {  # peak resident memory in KiB of the largest rank
  mpirun --oversubscribe -np 2 \
    sh -c "/usr/bin/time -f %M -o $1.rss.\$OMPI_COMM_WORLD_RANK \"$WAVG\" allreduce -q '$1{rank}.h5' -o $1-avg.h5"
  sort -n $1.rss.* | tail -1
}
small=$(peak small) big=$(peak big)
[ $((big - small)) -lt $((40 << 10)) ] || echo "peak grew by $(((big - small) >> 10)) MiB for a 48 MiB tensor"
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
x = [h5py.File(f"big{r}.h5", "r")["w"][()] for r in range(2)]
out = h5py.File("big-avg.h5", "r")
assert np.array_equal(out["w"][()], ((x[0].astype(np.float64) + x[1]) / 2).astype(np.float32))
assert out["step"][()] == 5
print("ok")
PY
