# mpirun -np 1..4 wavg merge into a DCP folder writes the very files of the single-process merge: in input 1's
# layout (samples/dcp/run, written by torch.distributed.checkpoint: every rank writes its share of each chunk into
# the copies rank 0 made, which joins the ranks' CRC-32 spans), and afresh from safetensors inputs with one large
# tensor (--format dcp: one rank file of torch.save archives). The fresh folder is read without torch or wavg
# (.metadata through tests/dcp/dcp_stubs.py, each archive by zipfile, its CRC-32s checked): numpy's mean; a second
# run with --force replaces the folder; nothing temporary is left.
. "$ROOT/tests/support/mpi_env.sh"
R="$SAMPLES"/dcp/run
"$WAVG" merge "$R"/step-100 "$R"/step-200 "$R"/step-300 -o run/ -q
/usr/bin/python3 - "$ROOT" <<'PY'
import sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
rng = np.random.default_rng(3)
for k in range(3):
    save(f"in{k}.safetensors", {"embed": rng.standard_normal((1001, 257)).astype(np.float32),
                                "w": rng.standard_normal((257, 100)).astype(np.float16),
                                "ids": np.arange(5, dtype=np.int64)})
PY
"$WAVG" merge in0.safetensors in1.safetensors in2.safetensors -o fresh/ --format dcp -q
for k in 1 2 3 4; do
  mpirun --oversubscribe -np $k "$WAVG" merge "$R"/step-100 "$R"/step-200 "$R"/step-300 -o run$k/ -q
  diff -r run run$k >/dev/null && echo "$k rank(s), input 1's layout: the single-process files"
  mpirun --oversubscribe -np $k "$WAVG" merge in0.safetensors in1.safetensors in2.safetensors -o fresh$k/ \
    --format dcp -q
  diff -r fresh fresh$k >/dev/null && echo "$k rank(s), afresh: the single-process files"
done
mpirun --oversubscribe -np 3 "$WAVG" merge in2.safetensors in1.safetensors in0.safetensors -o fresh2/ \
  --format dcp -q --force
ls -A | grep -c '\.wavg-' || true
/usr/bin/python3 - "$ROOT" <<'PY'
import io, os, pickle, sys, zipfile
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/dcp")
sys.path.insert(0, sys.argv[1] + "/tests/support")
import dcp_stubs  # noqa: F401
from write_safetensors import load
ins = [load(f"in{k}.safetensors")[0] for k in range(3)]
DTYPE = {"FloatStorage": "<f4", "HalfStorage": "<f2", "LongStorage": "<i8"}
class Tensor(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return lambda storage, offset, size, stride, grad, hooks: (storage, tuple(size))
        if (module, name) == ("collections", "OrderedDict"):
            return dict
        return name
    def persistent_load(self, pid):
        return pid
for d, order in [("fresh4", [0, 1, 2]), ("fresh2", [2, 1, 0])]:
    meta = pickle.load(open(f"{d}/.metadata", "rb"))
    for key, info in meta.storage_data.items():
        data = open(os.path.join(d, info.relative_path), "rb").read()[info.offset:info.offset + info.length]
        z = zipfile.ZipFile(io.BytesIO(data))
        assert z.testzip() is None, (d, key.fqn)
        storage, size = Tensor(io.BytesIO(z.read("archive/data.pkl"))).load()
        got = np.frombuffer(z.read("archive/data/" + storage[2]), DTYPE[storage[1]]).reshape(size)
        a, b, c = (ins[k][key.fqn] for k in order)
        want = a if a.dtype == np.int64 else (((a.astype(np.float64) + b) + c) / 3).astype(a.dtype)
        assert got.tobytes() == want.tobytes(), (d, key.fqn)
print("CRC-32s hold; values: numpy's mean")
PY
