# mpirun -np 1..4 wavg merge over three safetensors inputs with one huge embedding writes the very bytes of the
# single-process merge (each rank writes its share in place), whose values are numpy's mean (float64 sum in input
# order, divided once, rounded once); -v on 3 ranks lists each rank's share within 5% of an even one; the
# fingerprints, hashed by the ranks in turn, are the inputs' own (xxhsum -H2 where installed: compared with the
# single-process ones, which other cases check).
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
rng = np.random.default_rng(47)
for k in range(3):
    save(f"in{k}.safetensors", {
        "embed": rng.standard_normal((3001, 331)).astype(np.float32),
        "norm": rng.standard_normal(331).astype(np.float16),
        "head": rng.standard_normal((331, 7)).astype(np.float64),
        "step": np.array([12], dtype=np.int64),
        "bias": rng.standard_normal(5).astype(np.float32)})
PY
"$WAVG" merge in0.safetensors in1.safetensors in2.safetensors -o single.safetensors -q
for k in 1 2 3 4; do
  v=-q; [ $k = 3 ] && v=-v
  mpirun --oversubscribe -np $k "$WAVG" merge in0.safetensors in1.safetensors in2.safetensors -o $k.safetensors \
    $v 2>err$k >out$k
  cmp single.safetensors $k.safetensors && echo "$k rank(s): the single-process bytes"
done
ls -A | grep -c '\.wavg-' || true
/usr/bin/python3 - "$ROOT" <<'PY'
import re, sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import load
ins = [load(f"in{k}.safetensors")[0] for k in range(3)]
out, meta = load("3.safetensors")
for n in ["embed", "norm", "head", "bias"]:
    want = ((ins[0][n].astype(np.float64) + ins[1][n]) + ins[2][n]) / 3
    assert out[n].tobytes() == want.astype(ins[0][n].dtype).tobytes(), n
assert out["step"].tolist() == [12]
print("values: numpy's mean")
shares = [int(m) for m in re.findall(r"rank \d of 3: (\d+) bytes read and written", open("err3").read())]
assert len(shares) == 3, open("err3").read()
even = sum(shares) / 3
assert all(abs(s - even) <= 0.05 * even for s in shares), shares
print("3 shares within 5% of an even share")
PY
