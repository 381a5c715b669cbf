# A long mismatch report: the summary line leads (how many of input 1's tensors differ, and why, with the first
# detail), then at most 20 lines and how many more; -v lists every one. The inputs are written here with numpy:
# 30 float32 tensors, 25 of which have another shape in b.safetensors and one an integer dtype (another float dtype
# is averaged, issue 39 item 9).
# Then --int-policy equal over three inputs names the third, whose int64 tensor differs at element 2.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "no numpy"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
def write(path, tensors):
    hdr, data = {}, b""
    for k, v in tensors.items():
        hdr[k] = {"dtype": {"float32": "F32", "float64": "F64", "int64": "I64"}[str(v.dtype)], "shape": list(v.shape),
                  "data_offsets": [len(data), len(data) + v.nbytes]}
        data += v.tobytes()
    h = json.dumps(hdr).encode()
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
write("a.safetensors", {f"t{i:02}": np.zeros(2, np.float32) for i in range(30)})
b = {f"t{i:02}": np.zeros(3 if i < 25 else 2, np.float32) for i in range(30)}
b["t29"] = np.zeros(2, np.int64)
write("b.safetensors", b)
for name, last in (("i1", 3), ("i2", 3), ("i3", 4)):
    write(f"{name}.safetensors", {"w": np.ones(2, np.float32), "count": np.array([1, 2, last], np.int64)})
PY
set +e
"$WAVG" check a.safetensors b.safetensors
echo "exit $?"
"$WAVG" check -v a.safetensors b.safetensors 2>all.txt
echo "exit $?, $(wc -l <all.txt) lines with -v"
"$WAVG" check --int-policy equal i1.safetensors i2.safetensors i3.safetensors
echo "exit $?"
