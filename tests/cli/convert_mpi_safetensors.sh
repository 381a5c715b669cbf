# mpirun -np 2 wavg convert --out-dtype float16 writes the single-process bytes (each rank rounds and writes its
# share in place), whose float32 tensors are numpy's float16 rounding and whose integer tensor is copied.
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
rng = np.random.default_rng(5)
save("in.safetensors", {"embed": rng.standard_normal((1000, 300)).astype(np.float32),
                        "ids": np.arange(70000, dtype=np.int64)})
PY
"$WAVG" convert in.safetensors -o single.safetensors --out-dtype float16 -q
mpirun --oversubscribe -np 2 "$WAVG" convert in.safetensors -o two.safetensors --out-dtype float16 -q
cmp single.safetensors two.safetensors && echo "2 ranks: the single-process bytes"
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import load
x, _ = load("in.safetensors")
y, _ = load("two.safetensors")
assert y["embed"].tobytes() == x["embed"].astype(np.float16).tobytes()
assert y["ids"].tolist() == x["ids"].tolist()
print("values: numpy's float16 and the integers")
PY
