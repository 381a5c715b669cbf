# wavg JSON against Python's json and numpy: a safetensors file of every dtype made by numpy is converted to wavg
# JSON; Python parses that JSON with json.loads, applies SPEC.md's reading rule and compares every bit. Then a JSON
# file written by Python's json.dump goes back through wavg to safetensors, compared bit for bit again.
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "no numpy"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
rng = np.random.default_rng(7)
arrays = {
  "f64": np.concatenate([rng.standard_normal(200),
                         [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1.7976931348623157e308]]),
  "f32": np.concatenate([rng.standard_normal(200).astype(np.float32), np.float32([1e-45, -0.0, np.inf, 3.4028235e38])]),
  "f16": np.arange(65536, dtype=np.uint16).view(np.float16),
  "i8": np.int8([-128, 0, 127]), "i16": np.int16([-32768, 32767]), "i32": np.int32([-2**31, 2**31 - 1]),
  "i64": np.int64([-2**63, 2**63 - 1]), "u8": np.uint8([0, 255]), "u16": np.uint16([65535]),
  "u32": np.uint32([2**32 - 1]), "u64": np.uint64([2**64 - 1]), "b": np.array([True, False]),
}
arrays["f32"] = arrays["f32"].astype(np.float32)
names = {np.float64: "F64", np.float32: "F32", np.float16: "F16", np.int8: "I8", np.int16: "I16", np.int32: "I32",
         np.int64: "I64", np.uint8: "U8", np.uint16: "U16", np.uint32: "U32", np.uint64: "U64", np.bool_: "BOOL"}
header, blob = {}, b""
for k, a in arrays.items():
    b = a.tobytes()
    header[k] = {"dtype": names[a.dtype.type], "shape": list(a.shape), "data_offsets": [len(blob), len(blob) + len(b)]}
    blob += b
h = json.dumps(header).encode()
open("in.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + blob)
np.savez("arrays.npz", **arrays)
PY
"$WAVG" convert -q in.safetensors -o out.json
"$WAVG" convert -q in.safetensors -o out64.json --format json-base64
/usr/bin/python3 - <<'PY'
import json, base64, numpy as np
arrays = dict(np.load("arrays.npz"))
def value(s, dt):
    # SPEC.md: special strings; otherwise the decimal rounded to binary64, then to the element type.
    if isinstance(s, str):
        if s == "NaN": return np.array(np.nan, dt)
        if s in ("Infinity", "-Infinity"): return np.array(float(s), dt)
        assert s.startswith("NaN:0x"), s
        return np.array(int(s[6:], 16), "u%d" % np.dtype(dt).itemsize).view(dt)
    if isinstance(s, (bool, int)) and dt.kind != "f": return np.array(s, dt)
    return np.array(float(s), np.float64).astype(dt)
for name, encoded in (("out.json", False), ("out64.json", True)):
    doc = json.load(open(name))
    assert doc["format"] == "wavg-json" and doc["version"] == 1
    assert set(doc["metadata"]) >= {"wavg_version", "wavg_inputs"}
    got = {t["name"]: t for t in doc["tensors"]}
    assert set(got) == set(arrays), sorted(got)
    for k, a in arrays.items():
        t = got[k]
        assert t["shape"] == list(a.shape) and t["dtype"] == {"b": "bool"}.get(k, str(a.dtype)), (k, t["dtype"])
        if encoded:
            back = np.frombuffer(base64.b64decode(t["data"]), a.dtype)
        else:
            back = np.array([value(s, a.dtype) for s in t["data"]], a.dtype)
        assert back.tobytes() == a.tobytes(), k
    if not encoded:
        # Shortest: no float32 decimal is longer than numpy's own shortest repr of the same value.
        for s, v in zip(got["f32"]["data"], arrays["f32"]):
            if not isinstance(s, str):
                assert len(repr(s)) <= len(np.format_float_positional(v, unique=True)) + 6, (s, v)
# Python writes a document by hand: json.dump of a dict keeps the member order the spec asks for.
doc = {"format": "wavg-json", "version": 1, "metadata": {"source": "python"}, "tensors": [
    {"name": "w", "dtype": "float32", "shape": [2, 2], "data": [0.1, -2.5, "NaN", 3]},
    {"name": "n", "dtype": "int32", "shape": [3], "encoding": "base64",
     "data": base64.b64encode(np.int32([1, -2, 3]).tobytes()).decode()}]}
json.dump(doc, open("py.json", "w"))
PY
"$WAVG" convert -q py.json -o py.safetensors
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
raw = open("py.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n]); data = raw[8 + n:]
def get(k, dt):
    b, e = h[k]["data_offsets"]; return np.frombuffer(data[b:e], dt)
assert get("w", np.float32).tobytes() == np.float32([0.1, -2.5, np.nan, 3]).tobytes()
assert list(get("n", np.int32)) == [1, -2, 3]
assert h["__metadata__"]["wavg_command"] == "convert"
print("ok")
PY
