# Under mpirun -np 3 with --int-policy equal, integer values that differ only in the last rank's share (the last
# element of the last tensor) make every rank exit 3 with one report, the single-process one, and nothing written:
# each rank compares only its share, and the ranks agree before any value is written.
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
ids = np.arange(300000, dtype=np.int64)
other = ids.copy()
other[-1] = 7
w = np.ones(100000, np.float32)
save("a.safetensors", {"w": w, "ids": ids})
save("b.safetensors", {"w": w, "ids": other})
PY
set +e
"$WAVG" merge a.safetensors b.safetensors --int-policy equal -o out.safetensors 2>single.err
echo "one process: exit $?"
mpirun --oversubscribe -np 3 "$WAVG" merge a.safetensors b.safetensors --int-policy equal -o out.safetensors \
  2>ranks.err
echo "3 ranks: exit $?"
grep '^wavg' ranks.err | diff single.err - && echo "one report, the single-process one"
ls -A | grep -c 'out\|\.wavg-' || true
