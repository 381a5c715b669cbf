# Sourced by the CLI cases that run wavg under mpirun: skips (exit 77) where wavg has no MPI, there is no mpirun or
# no h5py, and lets Open MPI run as root and oversubscribe this machine's cores.
grep -q "built without MPI" "$WAVG" && { echo "wavg built without MPI"; exit 77; }
command -v mpirun >/dev/null || { echo "no mpirun"; exit 77; }
/usr/bin/python3 -c "import h5py" 2>/dev/null || { echo "no h5py"; exit 77; }
# Open MPI's plugins are dlopen'ed and unloaded, so LeakSanitizer (in the sanitize suite) cannot even name what
# they keep until exit; leak checks stay on for every other test.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# kill_rank_when VICTIM GLOB LAUNCHER: waits (up to 10 s) until a file matching GLOB exists, the temporary output
# the ranks are writing, then SIGKILLs the rank VICTIM among mpirun LAUNCHER's children.
kill_rank_when() {
  for _ in $(seq 2000); do
    compgen -G "$2" >/dev/null && break
    sleep 0.005
  done
  for pid in $(pgrep -P "$3"); do
    grep -qz "^OMPI_COMM_WORLD_RANK=$1\$" /proc/$pid/environ 2>/dev/null && kill -KILL $pid
  done
}
