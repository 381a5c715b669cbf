# Interrupting a merge into a model folder (SIGINT, SIGTERM, SIGHUP at moments spread over the run) leaves neither
# the temporary folder (.avg.wavg-XXXXXX) nor a partial avg/: the folder appears whole or not at all. With --force
# the old model's files are replaced with the interrupts held back, the index last, so an interrupted replacement
# leaves the old model or the new one whole.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
mkdir out
/usr/bin/python3 - <<'PY'
import json, numpy as np
from hf_tools import save_sharded
for i in (1, 2):
    t = {f"layer{k}.weight": np.full((512, 1024), float(i + k), np.float32) for k in range(8)}
    save_sharded(f"run{i}", t, [[f"layer{k}.weight" for k in range(j, j + 2)] for j in range(0, 8, 2)])
    json.dump({"run": i}, open(f"run{i}/config.json", "w"))
PY
for delay in 0.02 0.1 0.3; do
  for sig in INT TERM HUP; do
    "$WAVG" merge -q run1 run2 -o out/avg/ --shard-size 4MB 2>/dev/null & pid=$!
    sleep $delay
    kill -$sig $pid 2>/dev/null || true
    wait $pid || true
    rm -rf out/avg  # the run may have finished before the signal
    [ -z "$(ls -A out)" ] || { echo "left after SIG$sig at ${delay}s: $(ls -A out)"; exit 1; }
  done
done
"$WAVG" merge -q run1 run2 -o out/avg/ --shard-size 4MB
for sig in INT TERM; do
  "$WAVG" merge -q run2 run1 -o out/avg/ --force --shard-size 4MB 2>/dev/null & pid=$!
  sleep 0.1
  kill -$sig $pid 2>/dev/null || true
  wait $pid || true
  [ "$(ls -A out)" = avg ] || { echo "left after SIG$sig: $(ls -A out)"; exit 1; }
done
/usr/bin/python3 - <<'PY'
import json
from hf_tools import read_safetensors
index = json.load(open("out/avg/model.safetensors.index.json"))
assert sorted(index["weight_map"]) == [f"layer{k}.weight" for k in range(8)]
for s in set(index["weight_map"].values()):
    for name, a in read_safetensors(f"out/avg/{s}")[0].items():
        k = int(name[5])
        assert (a == k + 1.5).all(), name
assert json.load(open("out/avg/config.json"))["run"] in (1, 2)
PY
echo ok
