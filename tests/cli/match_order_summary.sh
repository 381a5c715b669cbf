# Pairing by position (--match order) leads its mismatch report with the same one-line summary as pairing by name:
# b.safetensors has other names and 3 of its 4 tensors another shape (written here with numpy).
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "no numpy"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
def write(path, tensors):
    hdr, data = {}, b""
    for k, v in tensors.items():
        hdr[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [len(data), len(data) + v.nbytes]}
        data += v.tobytes()
    h = json.dumps(hdr).encode()
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
write("a.safetensors", {f"a{i}": np.zeros(2, np.float32) for i in range(4)})
write("b.safetensors", {f"b{i}": np.zeros(3 if i else 2, np.float32) for i in range(4)})
PY
"$WAVG" check --match order a.safetensors b.safetensors || echo "exit $?"
