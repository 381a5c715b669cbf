# A TF.js output (model.json and three shards) commits as one: merges killed at random moments, by SIGKILL (no
# handler runs) and by SIGINT, into a fresh target and over an old model with --force, always leave a target that
# reads as the old model (or none, when fresh) or as the new one, never a mix. After SIGINT nothing but the
# target's own files is left; after SIGKILL the leftovers do not confuse the next run: without --force they are
# files the new output would remove, a refusal naming one (removal.hpp), and --force removes them. The models are
# written and checked by numpy.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cat > model.py <<'PY'
import json, os, sys, numpy as np
N = 3 << 19  # float32 values: 6 MiB, shards of 4 and 2 MiB
def values(name):
    k = np.arange(N, dtype=np.int64)
    return {"a": k % 251, "b": (k % 13) * 2, "c": k % 17}[name].astype(np.float32)
def write(name):
    os.makedirs(name, exist_ok=True)
    data, paths = values(name).tobytes(), []
    for i in range(0, len(data), 4 << 20):
        paths.append(f"group1-shard{i // (4 << 20) + 1}of2.bin")
        open(f"{name}/{paths[-1]}", "wb").write(data[i:i + (4 << 20)])
    json.dump({"format": "layers-model", "modelTopology": {}, "weightsManifest": [
        {"paths": paths, "weights": [{"name": "w", "shape": [N], "dtype": "float32"}]}]},
        open(f"{name}/model.json", "w"))
def read(d):
    m = json.load(open(f"{d}/model.json"))
    paths = m["weightsManifest"][0]["paths"]
    return paths, np.frombuffer(b"".join(open(f"{d}/{p}", "rb").read() for p in paths), np.float32)
if sys.argv[1] == "make":
    for name in "abc": write(name)
    sys.exit()
# check SNAPSHOT...: each holds the target as the kill left it (hard links), and what.txt: signal, whether an old
# model was there, and the files before the run. The target must be the old model (or none), or the new one, whole.
new, old_values = (values("a") + values("b")) / 2, (values("a") + values("c")) / 2
for d in sys.argv[2:]:
    sig, old, *before = open(f"{d}/what.txt").read().split()
    if not os.path.exists(f"{d}/model.json"):
        assert old == "none", f"{d}: the old model.json is gone"
        state, mine = "none", set()
    else:
        paths, got = read(d)
        state = ("new" if np.array_equal(got, new)
                 else "old" if old == "old" and np.array_equal(got, old_values) else None)
        assert state, f"{d}: model.json reads as neither the old nor the new model"
        mine = set(paths) | {"model.json"}
    if sig == "INT":  # nothing of an interrupted run is left; a finished run may have retired the old shards
        left = set(os.listdir(d)) - mine - set(before) - {"what.txt"}
        assert not left, f"{d}: left behind after SIGINT: {sorted(left)}"
    print(state)
PY
/usr/bin/python3 model.py make
mkdir fresh force
RANDOM=13
runs=0
for i in 1 2 3 4 5; do
  for sig in INT KILL; do
    for target in fresh force; do
      if [ $target = force ]; then
        "$WAVG" merge -q a/model.json c/model.json -o force/model.json --force
        flag=--force old=old
      else
        rm -f fresh/*  # a fresh target: no model, and no shards a killed run left (those need --force)
        flag= old=none
      fi
      before=$(ls -A $target)
      "$WAVG" merge -q a/model.json b/model.json -o $target/model.json $flag 2>/dev/null & pid=$!
      sleep "0.$(printf '%03d' $((RANDOM % 400)))"
      kill -$sig $pid 2>/dev/null || true
      wait $pid 2>/dev/null || true
      runs=$((runs + 1))
      cp -al $target snap$runs  # hard links: files are only ever added or removed, never rewritten
      echo $sig $old $before > snap$runs/what.txt
    done
  done
done
# How the kills fell (old/none: before the commit, new: after) goes to stderr.
/usr/bin/python3 model.py check snap* > states.txt
sort states.txt | uniq -c >&2
# After all that, a plain run still writes the fresh target, and --force the old one.
rm -f fresh/model.json
code=0
"$WAVG" merge -q a/model.json b/model.json -o fresh/model.json 2>err || code=$?
if [ $code != 0 ]; then
  [ $code = 2 ] && grep -q '^wavg: error: fresh/model.*shard.*is a TF.js shard named like the output' err || {
    cat err
    exit 1
  }
  "$WAVG" merge -q a/model.json b/model.json -o fresh/model.json --force
fi
"$WAVG" merge -q a/model.json b/model.json -o force/model.json --force
for target in fresh force; do cp -al $target final-$target && echo KILL none > final-$target/what.txt; done
/usr/bin/python3 model.py check final-fresh final-force
echo "$runs interrupted runs"
