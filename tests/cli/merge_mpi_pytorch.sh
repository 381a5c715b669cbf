# mpirun -np 1..4 wavg merge of torch.save files (torch 1.13 writes them) into a .pt writes the very bytes of the
# single-process merge: every rank lays the zip out from the metadata and writes its share in place, and rank 0
# copies input 1's pickle, joins the ranks' CRC-32 spans and writes the headers; the same from safetensors inputs
# (a fresh state_dict) on 3 ranks. zipfile checks every CRC-32 and torch.load reads numpy's mean; a second run with
# --force replaces the file; nothing temporary is left.
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 -c "import torch" 2>/dev/null || { echo "no torch"; exit 77; }
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
import torch
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
rng = np.random.default_rng(7)
for k in range(3):
    sd = {"embed": rng.standard_normal((1001, 257)).astype(np.float32),
          "layers.0.w": rng.standard_normal((257, 300)).astype(np.float16),
          "norm": rng.standard_normal(257).astype(np.float32),
          "step": np.array([9], dtype=np.int64)}
    torch.save({n: torch.from_numpy(a) for n, a in sd.items()}, f"in{k}.pt")
    save(f"in{k}.safetensors", sd)
PY
"$WAVG" merge in0.pt in1.pt in2.pt -o single.pt -q
for k in 1 2 3 4; do
  mpirun --oversubscribe -np $k "$WAVG" merge in0.pt in1.pt in2.pt -o $k.pt -q
  cmp single.pt $k.pt && echo "$k rank(s): the single-process bytes"
done
"$WAVG" merge in0.safetensors in1.safetensors in2.safetensors -o fresh.pt -q
mpirun --oversubscribe -np 3 "$WAVG" merge in0.safetensors in1.safetensors in2.safetensors -o fresh3.pt -q
cmp fresh.pt fresh3.pt && echo "from safetensors, 3 ranks: the single-process bytes"
mpirun --oversubscribe -np 3 "$WAVG" merge in2.pt in1.pt in0.pt -o 2.pt -q --force
ls -A | grep -c '\.wavg-' || true
/usr/bin/python3 - <<'PY'
import zipfile
import numpy as np
import torch
ins = [{n: t.numpy() for n, t in torch.load(f"in{k}.pt").items()} for k in range(3)]
for f, order in [("4.pt", [0, 1, 2]), ("fresh3.pt", [0, 1, 2]), ("2.pt", [2, 1, 0])]:
    assert zipfile.ZipFile(f).testzip() is None, f
    out = torch.load(f)
    for n in ["embed", "layers.0.w", "norm"]:
        a, b, c = (ins[k][n] for k in order)
        want = ((a.astype(np.float64) + b) + c) / 3
        assert out[n].numpy().tobytes() == want.astype(a.dtype).tobytes(), (f, n)
    assert out["step"].tolist() == [9]
print("CRC-32s hold; values: numpy's mean")
PY
