# --force over a model folder replaces only the model: the folder also holds a cloned repository's .git/, a nested
# checkpoint-500/ (with its own model.safetensors), a user's notes, a symbolic link and a stray script, and each
# stays byte for byte (compared with a copy taken before); the old model's weights and index go, the new model's
# tensors are numpy's float64 mean rounded once. Replacing a sharded model by sharded output whose names are taken
# gives the new shards the run's token; replacing it by one file removes the old index and shards; replacing it by
# hf-bin shards removes the safetensors model. A folder that holds no model is refused by name even with --force,
# and so is a model folder whose config.json (a file the output copies) is a symbolic link.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import json, os, numpy as np
from hf_tools import save_sharded
for i in (1, 2):
    t = {f"layer{k}.weight": np.full((4, 4), float(i + k), np.float32) for k in range(4)}
    save_sharded(f"run{i}", t, [["layer0.weight", "layer1.weight"], ["layer2.weight", "layer3.weight"]])
    json.dump({"run": i}, open(f"run{i}/config.json", "w"))
old = {f"layer{k}.weight": np.zeros((4, 4), np.float32) for k in range(4)}
save_sharded("out", old, [["layer0.weight"], ["layer1.weight"], ["layer2.weight", "layer3.weight"]])
os.makedirs("out/.git/refs/heads")
open("out/.git/HEAD", "w").write("ref: refs/heads/main\n")
open("out/.git/refs/heads/main", "w").write("0123456789abcdef\n")
os.makedirs("out/checkpoint-500")
open("out/checkpoint-500/optimizer.pt", "wb").write(bytes(range(256)))
save_sharded("out/checkpoint-500", old, [["layer0.weight"], ["layer1.weight"]])
open("out/notes.txt", "w").write("my notes\n")
open("out/train.py", "w").write("print('train')\n")
os.symlink("notes.txt", "out/notes-link")
PY
cp -a out kept
check() {  # the user's part of out/ is byte for byte what it was
  for f in .git checkpoint-500 notes.txt train.py; do diff -r "kept/$f" "out/$f" || { echo "$1: $f changed"; exit 1; }; done
  [ "$(readlink out/notes-link)" = notes.txt ] || { echo "$1: the link changed"; exit 1; }
  ls -A out | grep wavg- && { echo "$1: temporary files left"; exit 1; }
  ls -A . | grep wavg- && { echo "$1: temporary folder left"; exit 1; }
  echo "$1: $(ls out | grep -v -e notes -e train.py -e checkpoint-500 | sed 's/-[A-Za-z0-9]\{6\}\./-TOKEN./' | tr '\n' ' ')"
}
"$WAVG" merge -q run1 run2 -o out/ --force --shard-size 100B
check sharded
/usr/bin/python3 - <<'PY'
import json
from hf_tools import read_safetensors
idx = json.load(open("out/model.safetensors.index.json"))
for name, shard in idx["weight_map"].items():
    k = int(name[5])
    assert (read_safetensors(f"out/{shard}")[0][name] == k + 1.5).all(), name
assert json.load(open("out/config.json")) == {"run": 1}
PY
"$WAVG" merge -q run2 run1 -o out --force --shard-size 100B
check again
"$WAVG" merge -q run1 run2 -o out --force
check single
"$WAVG" merge -q run1 run2 -o out --force --format hf-bin --shard-size 100B
check bin
code=0
"$WAVG" merge -q run1 run2 -o out/.git --force 2>&1 || code=$?
echo "not a model: exit $code"
rm out/config.json && ln -s notes.txt out/config.json
code=0
"$WAVG" merge -q run1 run2 -o out --force 2>&1 || code=$?
echo "linked config: exit $code, $(readlink out/config.json)"
