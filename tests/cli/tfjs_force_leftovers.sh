# --force over a TF.js model removes shards of the model's name that no model.json lists any more (what an
# interrupted run or the losing side of two runs replacing one model at once leaves: model-TOKEN-shard1of1.bin,
# model-shard2of2.bin), as it removes the old model's own shards; other files beside it stay, and the new model
# reads back (the reader here is a few lines of json and numpy, not wavg).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
cp "$ROOT/tests/cli/hf_tools.py" .
/usr/bin/python3 - <<'PY'
import numpy as np
from hf_tools import write_safetensors
write_safetensors("a.safetensors", {"w": np.arange(4, dtype=np.float32)})
write_safetensors("b.safetensors", {"w": np.arange(4, 8, dtype=np.float32)})
PY
mkdir out
"$WAVG" merge -q a.safetensors a.safetensors -o out/model.json --format tfjs
echo left > out/model-Ab12Cd-shard1of1.bin
echo left > out/model-shard2of2.bin
echo keep > out/other-shard1of1.bin
echo keep > out/notes.txt
"$WAVG" merge -q a.safetensors b.safetensors -o out/model.json --format tfjs --force
ls out | sed 's/-[A-Za-z0-9]\{6\}-shard/-TOKEN-shard/'
/usr/bin/python3 - <<'PY'
import json, numpy as np
m = json.load(open("out/model.json"))
data = b"".join(open("out/" + p, "rb").read() for p in m["weightsManifest"][0]["paths"])
assert np.array_equal(np.frombuffer(data, np.float32), np.arange(2, 6, dtype=np.float32))
print("the new model holds the mean")
PY
