# mpirun -np 3 wavg merge --recipe (mergekit's TIES over a base, whose magnitude cuts sum over the single-process
# blocks' reduction chunks) writes the single-process bytes: every rank's share begins where such a chunk begins.
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
rng = np.random.default_rng(3)
for k in range(3):
    save(f"m{k}.safetensors", {"embed": rng.standard_normal((2001, 301)).astype(np.float32),
                               "norm": rng.standard_normal(301).astype(np.float32)})
PY
cat > ties.yml <<'YML'
merge_method: ties
base_model: m0.safetensors
parameters:
  density: 0.5
models:
  - model: m1.safetensors
    parameters: {weight: 1.0}
  - model: m2.safetensors
    parameters: {weight: 0.5}
YML
"$WAVG" merge --recipe ties.yml -o single.safetensors -q
mpirun --oversubscribe -np 3 "$WAVG" merge --recipe ties.yml -o three.safetensors -q
cmp single.safetensors three.safetensors && echo "3 ranks: the single-process bytes"
