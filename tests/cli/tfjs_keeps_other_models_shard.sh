# A new TF.js output leaves alone a shard another model in its folder uses (issue 39 A): d/v1.json, an earlier
# model.json the user renamed, lists model-shard1of1.bin, the name the new d/model.json would take. The new model
# takes a name of its own (no --force needed, none given), v1.json and its shard stay byte for byte and still read
# as their model, and the new one as the mean (the reader is json and numpy, not wavg).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "numpy missing"; exit 77; }
mkdir d
/usr/bin/python3 - <<'PY'
import json, numpy as np
np.arange(4, dtype=np.float32).tofile("d/model-shard1of1.bin")
json.dump({"format": "layers-model", "weightsManifest": [
    {"paths": ["model-shard1of1.bin"], "weights": [{"name": "w", "shape": [4], "dtype": "float32"}]}]},
    open("d/v1.json", "w"))
open("d/notes.txt", "w").write("my notes\n")
PY
sha256sum d/v1.json d/model-shard1of1.bin d/notes.txt >before
"$WAVG" merge -q "$SAMPLES/tfjs/a/model.json" "$SAMPLES/tfjs/b/model.json" -o d/model.json
sha256sum --quiet -c before && echo "v1.json, its shard and the notes are byte for byte as before"
ls -A d | sed 's/-[A-Za-z0-9]\{6\}-shard/-TOKEN-shard/' | LC_ALL=C sort
/usr/bin/python3 - "$SAMPLES/tfjs" <<'PY'
import json, sys, numpy as np
def weights(path):
    m = json.load(open(path))
    folder = path.rsplit("/", 1)[0]
    out = {}
    for g in m["weightsManifest"]:
        data = b"".join(open(folder + "/" + p, "rb").read() for p in g["paths"])
        at = 0
        for w in g["weights"]:
            n = int(np.prod(w["shape"])) * 4
            out[w["name"]] = np.frombuffer(data[at:at + n], "<f4" if w["dtype"] == "float32" else "<i4")
            at += n
    return out
assert np.array_equal(weights("d/v1.json")["w"], np.arange(4, dtype=np.float32))
print("v1.json reads as its model")
a, b, m = weights(sys.argv[1] + "/a/model.json"), weights(sys.argv[1] + "/b/model.json"), weights("d/model.json")
for name, x in a.items():
    if x.dtype == np.float32:
        want = ((x.astype(np.float64) + b[name].astype(np.float64)) / 2).astype(np.float32)
        assert np.array_equal(m[name], want), name
print("model.json reads as the mean")
PY
