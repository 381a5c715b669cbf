# A rank killed (SIGKILL) while the ranks write their shares leaves nothing: no output and no temporary file, whether
# it is rank 1 (mpirun then ends rank 0, whose atomic file removes the temporary file) or rank 0 itself (the other
# ranks, ended by mpirun, remove the file rank 0 made). The kill comes as soon as the temporary file exists; a merge
# that finished first on a fast machine is a skip, not a pass. A SIGKILLed rank 0 leaves its lock file, unlocked,
# as one killed process does (output_lock.hpp: the next run takes and removes it), so it is not counted.
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
rng = np.random.default_rng(1)
for k in range(2):
    save(f"in{k}.safetensors", {"embed": rng.standard_normal(6_000_000).astype(np.float32)})
PY
for victim in 1 0; do
  set +e
  mpirun --oversubscribe -np 2 "$WAVG" merge in0.safetensors in1.safetensors -o out.safetensors --hash sha256 \
    -q 2>/dev/null &
  launcher=$!
  kill_rank_when $victim '.out.safetensors.wavg-*' $launcher
  wait $launcher
  code=$?
  set -e
  [ -e out.safetensors ] && [ $code = 0 ] && { echo "the merge finished before the kill"; exit 77; }
  echo "rank $victim killed: mpirun exit non-zero: $([ $code != 0 ] && echo yes)"
  echo "left behind: $(ls -A | grep -v '^in[01].safetensors$' | grep -vc '^\.out\.safetensors\.wavg-lock$')"
done
