# Small TF.js models: a weight declaring 2^40 x 2^40 float32 values over an 8-byte shard and a manifest listing one
# 8-byte shard 200,000 times (once mapped 200,000 times over, 4 s, until the system refused: "out of memory"), each
# refused in one line, exit 1, and a topology nested in 1,000,000 arrays (read: wavg does not walk it), each within
# 256 MiB and 20 s (tests/support/bounded.py).
/usr/bin/python3 - <<'PY'
import json, os
def model(folder, manifest, topology="{}"):
    os.makedirs(folder, exist_ok=True)
    open(f"{folder}/s.bin", "wb").write(b"\0" * 8)
    open(f"{folder}/model.json", "w").write('{"format": "layers-model", "modelTopology": ' + topology +
                                           ', "weightsManifest": ' + json.dumps(manifest) + "}")
w = lambda shape: {"name": "w", "shape": shape, "dtype": "float32"}
model("shape", [{"paths": ["s.bin"], "weights": [w([1 << 40, 1 << 40])]}])
model("paths", [{"paths": ["s.bin"] * 200000, "weights": [w([2])]}])
model("deep", [{"paths": ["s.bin"], "weights": [w([2])]}], "[" * 1000000 + "]" * 1000000)
PY
for f in shape paths deep; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f/model.json | tail -1
done
