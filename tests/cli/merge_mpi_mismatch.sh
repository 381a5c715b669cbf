# Under mpirun -np 3, inputs whose shapes differ make every rank exit 3 before anything is written, with one report:
# the single-process merge's, printed once (rank 0 gathers the ranks' problems and keeps each distinct one once).
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
save("a.safetensors", {"w": np.ones((4, 3), np.float32), "b": np.ones(3, np.float32)})
save("b.safetensors", {"w": np.ones((3, 4), np.float32), "b": np.ones(3, np.float32)})
PY
set +e
"$WAVG" merge a.safetensors b.safetensors -o out.safetensors 2>single.err
echo "one process: exit $?"
mpirun --oversubscribe -np 3 "$WAVG" merge a.safetensors b.safetensors -o out.safetensors 2>ranks.err
echo "3 ranks: exit $?"
grep '^wavg' ranks.err | diff single.err - && echo "one report, the single-process one"
ls -A | grep -c 'out\|\.wavg-' || true
