# A small safetensors file whose header declares a tensor of 2^60 elements over 8 bytes of data, and one whose
# metadata nests 500,000 JSON arrays: inspect refuses each in one line, exit 1, within 256 MiB
# and 20 s (tests/support/bounded.py, the driver of every reader's *_hostile_* case).
/usr/bin/python3 - <<'PY'
import json, struct
def st(header, data=b"\0" * 8):
    h = header.encode()
    return struct.pack("<Q", len(h)) + h + data
open("shape.safetensors", "wb").write(st(json.dumps({"w": {"dtype": "F32", "shape": [1 << 40, 1 << 20], "data_offsets": [0, 8]}})))
open("deep.safetensors", "wb").write(st('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}, "__metadata__": ' + "[" * 500000 + "]" * 500000 + "}"))
PY
for f in shape deep; do
  /usr/bin/python3 "$ROOT"/tests/support/bounded.py 256 20 "$WAVG" inspect $f.safetensors
done
