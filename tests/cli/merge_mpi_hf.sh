# mpirun -np 1..4 wavg merge into a Hugging Face folder of several safetensors shards (--shard-size) writes the very
# files of the single-process merge (every rank lays the shards out from the metadata and writes its share in place;
# rank 0 writes the headers, the index and config.json), whose values are numpy's mean; a second run with --force
# replaces the model in the folder and leaves the folder's other files; nothing temporary is left. The same with
# torch.save shards (--format hf-bin) on 3 ranks.
. "$ROOT/tests/support/mpi_env.sh"
/usr/bin/python3 - "$ROOT" <<'PY'
import json, os, sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import save
rng = np.random.default_rng(1)
for k in range(3):
    os.mkdir(f"in{k}")
    save(f"in{k}/model.safetensors", {
        "embed": rng.standard_normal((1001, 257)).astype(np.float32),
        "layers.0.w": rng.standard_normal((257, 300)).astype(np.float32),
        "layers.1.w": rng.standard_normal((257, 200)).astype(np.float16),
        "norm": rng.standard_normal(257).astype(np.float32),
        "step": np.array([3], dtype=np.int64)})
    json.dump({"model_type": "toy", "torch_dtype": "float32"}, open(f"in{k}/config.json", "w"))
PY
"$WAVG" merge in0 in1 in2 -o single/ --shard-size 400000 -q
echo "shards: $(ls single | grep -c '^model-0000[1-9]-of-0000[1-9]\.safetensors$')"
for k in 1 2 3 4; do
  mpirun --oversubscribe -np $k "$WAVG" merge in0 in1 in2 -o $k/ --shard-size 400000 -q
  diff -r single $k >/dev/null && echo "$k rank(s): the single-process files"
done
"$WAVG" merge in0 in1 in2 -o bin/ --format hf-bin --shard-size 400000 -q
mpirun --oversubscribe -np 3 "$WAVG" merge in0 in1 in2 -o bin3/ --format hf-bin --shard-size 400000 -q
diff -r bin bin3 >/dev/null && echo "hf-bin, 3 ranks: the single-process files"
echo notes >2/notes.txt
mpirun --oversubscribe -np 3 "$WAVG" merge in2 in1 in0 -o 2/ --shard-size 400000 -q --force
echo "--force: $(ls 2 | sed -E "s/-[A-Za-z0-9]{6}\.safetensors$/-TOKEN.safetensors/" | tr "\n" " ")"
ls -A | grep -c '\.wavg-' || true
/usr/bin/python3 - "$ROOT" <<'PY'
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests/support")
from write_safetensors import load
def folder(d):
    index = json.load(open(d + "/model.safetensors.index.json"))["weight_map"]
    return {n: load(f"{d}/{f}")[0][n] for n, f in index.items()}
ins = [load(f"in{k}/model.safetensors")[0] for k in range(3)]
for d, order in [("4", [0, 1, 2]), ("2", [2, 1, 0])]:
    out = folder(d)
    for n in ["embed", "layers.0.w", "layers.1.w", "norm"]:
        a, b, c = (ins[k][n] for k in order)
        want = ((a.astype(np.float64) + b) + c) / 3
        assert out[n].tobytes() == want.astype(a.dtype).tobytes(), (d, n)
    assert out["step"].tolist() == [3]
print("values: numpy's mean")
PY
