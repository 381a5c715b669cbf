# Two inputs with no tensor name in common: the report leads with one line saying they are different models, with
# each one's format and layout, before the summary and the per-tensor lines; check, merge and diff alike.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "no numpy"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
tensors = {"fc1.weight": np.zeros((2, 3), np.float32), "fc1.bias": np.zeros(2, np.float32)}
hdr, data = {}, b""
for k, v in tensors.items():
    hdr[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [len(data), len(data) + v.nbytes]}
    data += v.tobytes()
h = json.dumps(hdr).encode()
open("other.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + data)
PY
cp "$SAMPLES/mlp/node1.h5" .
set +e
"$WAVG" check node1.h5 other.safetensors 2>&1 | head -2
"$WAVG" merge node1.h5 other.safetensors -o out.h5 2>&1 | head -1
"$WAVG" diff node1.h5 other.safetensors 2>&1 | head -1
"$WAVG" merge node1.h5 other.safetensors --tensors intersection -o out.h5
echo "exit $?"
ls out.h5 2>/dev/null || echo "nothing written"
