# Two `merge --force` runs over one TF.js model.json at once take turns (issue 39, item 15): run 1 is stopped
# (SIGSTOP) once its writer has listed the old model's shards and made its own, run 2 starts and is given a second,
# then run 1 goes on. Each used to list the same old shards and retire only those, so the shards of whichever
# committed first stayed unreferenced; now run 2 waits for run 1's lock (.model.json.wavg-lock) and replaces run
# 1's model whole. Both exit 0, and the folder holds model.json and exactly the shards it lists, nothing else.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import write_safetensors
n = 8 << 20  # 32 MiB a model: run 1 is still writing when the loop below sees its first shard
write_safetensors("a.safetensors", {"w": np.full(n, 1, np.float32)})
write_safetensors("b.safetensors", {"w": np.full(n, 2, np.float32)})
PY
mkdir out
"$WAVG" merge -q a.safetensors b.safetensors -o out/model.json --format tfjs
caught=no
for try in 1 2 3 4 5; do
  "$WAVG" merge -q a.safetensors b.safetensors -o out/model.json --format tfjs --force &
  one=$!
  until compgen -G 'out/.model.json.wavg-*.1' >/dev/null || ! kill -0 $one 2>/dev/null; do :; done
  kill -STOP $one 2>/dev/null && compgen -G 'out/.model.json.wavg-*.1' >/dev/null && caught=yes
  "$WAVG" merge -q b.safetensors a.safetensors -o out/model.json --format tfjs --force &
  two=$!
  sleep 1
  kill -CONT $one 2>/dev/null || true
  c1=0 c2=0
  wait $one || c1=$?
  wait $two || c2=$?
  [ $caught = yes ] && break
done
echo "exit $c1 $c2"
echo "run 1 stopped while writing: $caught"
/usr/bin/python3 - <<'PY'
import json, os
m = json.load(open("out/model.json"))
listed = {p for g in m["weightsManifest"] for p in g["paths"]}
files = set(os.listdir("out"))
assert files == listed | {"model.json"}, sorted(files - listed - {"model.json"})
print(len(listed), "shards, each listed by model.json; nothing else in the folder")
PY
