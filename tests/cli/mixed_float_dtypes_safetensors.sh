# One tensor stored as bfloat16, float32 and float16 by three inputs (a client that trained in mixed precision):
# the mean is taken of every input's exact values and written in input 1's bfloat16, rounded once (or --out-dtype's
# float32), where this was once refused (exit 3). -v says which input stores which dtype. The expected values are
# the exact mean (Python's fractions) rounded to nearest even, computed here.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "python3-numpy missing"; exit 77; }
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
import json
import struct
import numpy as np
def save(path, tensors):
    header, data = {}, b""
    for name, (dtype, array) in tensors.items():
        raw = array.tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(path, "wb").write(struct.pack("<Q", len(text)) + text + data)
bf = (np.array([1.0, 2.5, -3.0, 0.15625, 1000.0, -0.0078125], dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)
save("m1.safetensors", {"w": ("BF16", bf.reshape(2, 3))})
save("m2.safetensors", {"w": ("F32", np.array([0.1, 2.0, 4.0, 1e-3, 3.3, 7.0], dtype=np.float32).reshape(2, 3))})
save("m3.safetensors", {"w": ("F16", np.array([0.5, -1.25, 0.1, 2.0, 65504, 0.333], dtype=np.float16).reshape(2, 3))})
PY
"$WAVG" merge -v m1.safetensors m2.safetensors m3.safetensors -o mean.safetensors 2>err.txt >/dev/null
grep -F 'stored as' err.txt
"$WAVG" merge -q m1.safetensors m2.safetensors m3.safetensors -o mean32.safetensors --out-dtype float32
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - <<'PY'
from fractions import Fraction
import numpy as np
from exact_rounding import rounded
from safetensors_tools import load
ins = [load(f"m{k}.safetensors")[1]["w"] for k in (1, 2, 3)]
x1 = (ins[0].astype(np.uint32) << 16).view(np.float32)
exact = [sum(Fraction(float(v)) for v in vals) / 3 for vals in zip(x1.ravel(), ins[1].ravel(), ins[2].ravel())]
want_bf = np.array([float(rounded(q, 8)) for q in exact], dtype=np.float32).view(np.uint32) >> 16
want_32 = np.array([float(rounded(q, 24)) for q in exact], dtype=np.float32)
_, mean = load("mean.safetensors")
assert mean["w"].dtype == np.uint16 and mean["w"].shape == (2, 3)  # bfloat16 bits
assert np.array_equal(mean["w"].ravel(), want_bf.astype(np.uint16)), (mean["w"], want_bf)
_, mean32 = load("mean32.safetensors")
assert mean32["w"].dtype == np.float32 and np.array_equal(mean32["w"].ravel(), want_32), (mean32["w"], want_32)
print("bfloat16 and float32: the exact mean rounded once")
PY
