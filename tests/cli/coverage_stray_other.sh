# The coverage rule for the other readers: a value outside the places the format keeps tensors is refused with a
# line naming it, never dropped. wavg JSON: an unknown member holding numbers, at the top and in a tensor.
# safetensors: data bytes no tensor covers. TF.js: shard bytes after the last weight of the manifest.
/usr/bin/python3 - <<'PY'
import json, struct
t = {"name": "w", "dtype": "float32", "shape": [2], "data": [1, 2]}
json.dump({"format": "wavg-json", "version": 1, "tensors": [t], "extra": [1, 2, 3]}, open("top.json", "w"))
json.dump({"format": "wavg-json", "version": 1, "tensors": [dict(t, bias=[3, 4])]}, open("member.json", "w"))
header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
header += b" " * (-len(header) % 8)
open("gap.safetensors", "wb").write(struct.pack("<Q", len(header)) + header + struct.pack("<3f", 1, 2, 3))
json.dump({"format": "layers-model", "modelTopology": {}, "weightsManifest": [
    {"paths": ["shard1.bin"], "weights": [{"name": "w", "shape": [2], "dtype": "float32"}]}]}, open("model.json", "w"))
open("shard1.bin", "wb").write(struct.pack("<3f", 1, 2, 3))
PY
for f in top.json member.json gap.safetensors model.json; do
  set +e
  "$WAVG" inspect "$f" >/dev/null
  echo "$f: exit $?"
  set -e
done
