# A round trip for every format x dtype: numpy writes a safetensors file with one tensor of each dtype wavg knows,
# edge values included (NaN payloads, infinities, -0, subnormals, extremes); wavg converts it to each format and
# back, and every tensor must come back with its dtype, shape and bytes. HDF5 and wavg JSON intermediates are also
# read by h5py and Python's json, independently of wavg. TF.js holds float32, int32 and bool only: those go there.
/usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null || { echo "no numpy/h5py"; exit 77; }
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
f32 = np.float32([0, -0.0, 1.5, np.inf, -np.inf, 1e-45, 3.4028235e38, -1.17549435e-38])
arrays = {
    "f16": np.arange(0, 65536, 97, dtype=np.uint16),  # bit patterns: every class of half, NaNs included
    "bf16": np.arange(0, 65536, 89, dtype=np.uint16),
    "f32": np.concatenate([f32, np.frombuffer(struct.pack("<I", 0x7fc00001), np.float32)]).reshape(3, 3),
    "f64": np.float64([0, -0.0, 5e-324, 1.7976931348623157e308, -np.inf, 0.1, 1 / 3]),
    "i8": np.int8([-128, 0, 127]), "i16": np.int16([-32768, 1, 32767]), "i32": np.int32([-2**31, 7, 2**31 - 1]),
    "i64": np.int64([-2**63, 2**63 - 1]), "u8": np.uint8([0, 255]), "u16": np.uint16([0, 65535]),
    "u32": np.uint32([0, 2**32 - 1]), "u64": np.uint64([0, 2**64 - 1]), "bool": np.array([True, False, True]),
}
names = {"f16": "F16", "bf16": "BF16", "f32": "F32", "f64": "F64", "i8": "I8", "i16": "I16", "i32": "I32",
         "i64": "I64", "u8": "U8", "u16": "U16", "u32": "U32", "u64": "U64", "bool": "BOOL"}
def write(path, keys):
    header, blob = {}, b""
    for k in keys:
        b = arrays[k].tobytes()
        header[k] = {"dtype": names[k], "shape": list(arrays[k].shape), "data_offsets": [len(blob), len(blob) + len(b)]}
        blob += b
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + blob)
write("all.safetensors", list(arrays))
write("tfjs.safetensors", ["f32", "i32", "bool"])
np.savez("want.npz", **arrays)
PY
for f in hdf5 safetensors json json-base64; do
  "$WAVG" convert -q all.safetensors --format "$f" -o "mid.$f" || exit 1
  "$WAVG" convert -q "mid.$f" -o "back.$f.safetensors" || exit 1
done
mkdir web
"$WAVG" convert -q tfjs.safetensors --format tfjs -o web/model.json || exit 1
"$WAVG" convert -q web/model.json -o back.tfjs.safetensors || exit 1
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np, h5py
want = dict(np.load("want.npz"))
names = {"F16": np.uint16, "BF16": np.uint16, "F32": np.float32, "F64": np.float64, "I8": np.int8, "I16": np.int16,
         "I32": np.int32, "I64": np.int64, "U8": np.uint8, "U16": np.uint16, "U32": np.uint32, "U64": np.uint64,
         "BOOL": np.bool_}
def read(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    h = json.loads(raw[8:8 + n])
    h.pop("__metadata__", None)
    return {k: (v["dtype"], np.frombuffer(raw[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]],
                                          names[v["dtype"]]).reshape(v["shape"])) for k, v in h.items()}
upper = {"f16": "F16", "bf16": "BF16", "bool": "BOOL"}
for fmt, keys in [("hdf5", want), ("safetensors", want), ("json", want), ("json-base64", want),
                  ("tfjs", ["f32", "i32", "bool"])]:
    got = read(f"back.{fmt}.safetensors")
    assert sorted(got) == sorted(keys), (fmt, sorted(got))
    for k in keys:
        dtype, a = got[k]
        assert dtype == upper.get(k, k.upper()), (fmt, k, dtype)
        assert a.shape == want[k].shape and a.tobytes() == want[k].tobytes(), (fmt, k)
# The intermediates, read by other programs.
with h5py.File("mid.hdf5", "r") as f:
    for k in ("f32", "f64", "i8", "i64", "u64"):
        assert f[k][()].tobytes() == want[k].tobytes(), ("h5py", k)
    assert f["f16"][()].view(np.uint16).tobytes() == want["f16"].tobytes(), "h5py f16"
    assert f["bool"].dtype == np.bool_ and f["bool"][()].tolist() == [True, False, True], "h5py bool"
doc = {t["name"]: t for t in json.load(open("mid.json"))["tensors"]}
assert doc["i64"]["data"] == [-2**63, 2**63 - 1] and doc["u64"]["data"] == [0, 2**64 - 1]
assert doc["f64"]["data"][2] == 5e-324 and doc["f64"]["data"][6] == 1 / 3
print("13 dtypes through HDF5, safetensors, wavg JSON (decimal and base64); 3 through TF.js: bytes kept")
PY
