# TF.js against numpy: two layers models written by tensorflowjs 4.22.0 (samples/tfjs, closed-form values) are
# merged into a TF.js model (a .json output of TF.js inputs is TF.js); Python reads its manifest the way
# read_weights.py does (each group's shards concatenated, weights back to back) and compares with the mean
# computed here. model.json keeps input 1's members.
# Then conversions: TF.js (quantised too) to safetensors, HDF5 and wavg JSON, and safetensors written by numpy to TF.js.
/usr/bin/python3 -c 'import numpy, h5py' 2>/dev/null || { echo "no numpy/h5py"; exit 77; }
T=$SAMPLES/tfjs
mkdir avg
"$WAVG" merge -q "$T/a/model.json" "$T/b/model.json" -o avg/model.json   # .json from TF.js inputs: TF.js
"$WAVG" convert -q "$T/q8/model.json" -o q8.safetensors
"$WAVG" convert -q "$T/q16/model.json" -o q16.h5
"$WAVG" convert -q "$T/graph/model.json" --format json -o graph.json
/usr/bin/python3 - "$T" <<'PY'
import json, os, struct, sys, numpy as np, h5py
T = sys.argv[1]
def read_tfjs(path):
    """read_weights.py's decoding: per group, the shards concatenated, weights back to back."""
    m = json.load(open(path))
    out = {}
    for g in m["weightsManifest"]:
        buf = b"".join(open(os.path.join(os.path.dirname(path), p), "rb").read() for p in g["paths"])
        at = 0
        for w in g["weights"]:
            assert "quantization" not in w
            dt = {"float32": np.float32, "int32": np.int32, "bool": np.bool_}[w["dtype"]]
            n = int(np.prod(w["shape"]))
            out[w["name"]] = np.frombuffer(buf, dt, n, at).reshape(w["shape"])
            at += n * np.dtype(dt).itemsize
        assert at == len(buf)
    return m, out
shapes = [("dense/kernel", (3, 4)), ("dense/bias", (4,)), ("dense_1/kernel", (4, 2)), ("dense_1/bias", (2,))]
m, got = read_tfjs("avg/model.json")
src = json.load(open(T + "/a/model.json"))
assert list(m) == list(src), list(m)
for k in ("format", "generatedBy", "convertedBy", "modelTopology"):
    assert m[k] == src[k], k
assert m["userDefinedMetadata"]["source"] == "make_tfjs.py a"
assert m["userDefinedMetadata"]["wavg"]["wavg_command"] == "merge"
assert m["weightsManifest"][0]["paths"] == ["model-shard1of1.bin"]
assert [w["name"] for w in m["weightsManifest"][0]["weights"]] == [n for n, _ in shapes]
for k, (name, shape) in enumerate(shapes):
    i = np.arange(np.prod(shape), dtype=np.float64)
    a = (i + 1) / 8 * (k + 1) - 0.5
    b = 2 - i / 16
    assert got[name].shape == shape and np.array_equal(got[name].ravel(), ((a + b) / 2).astype(np.float32)), name
# Quantised inputs: wavg's dequantised values against the reference reader's (expected.json).
expected = json.load(open(T + "/expected.json"))
raw = open("q8.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8 + n])
for name, _ in shapes:
    b, e = h[name]["data_offsets"]
    assert np.array_equal(np.frombuffer(raw[8 + n + b:8 + n + e], np.float32),
                          np.float32(expected["q8/" + name])), name
with h5py.File("q16.h5") as f:
    names = []
    f.visititems(lambda k, v: names.append(k) if isinstance(v, h5py.Dataset) else None)
    for name, _ in shapes:
        ds = [k for k in names if k.endswith(name)]
        assert len(ds) == 1, (name, names)
        assert np.array_equal(f[ds[0]][()].ravel(), np.float32(expected["q16/" + name])), name
g = {t["name"]: t for t in json.load(open("graph.json"))["tensors"]}
assert g["step"]["dtype"] == "int32" and g["step"]["data"] == [7, -3]
assert np.array_equal(np.float32(g["w"]["data"]), np.float32(expected["graph/w"]))
# A safetensors file written by numpy, for the way back.
arrays = {"x": np.float32([[1.5, -2], [0.25, 8]]), "n": np.int32([3, -4, 5]), "flag": np.array([True, False])}
header, blob = {}, b""
for k, a in arrays.items():
    header[k] = {"dtype": {"f": "F32", "i": "I32", "b": "BOOL"}[a.dtype.kind], "shape": list(a.shape),
                 "data_offsets": [len(blob), len(blob) + a.nbytes]}
    blob += a.tobytes()
t = json.dumps(header).encode()
open("np.safetensors", "wb").write(struct.pack("<Q", len(t)) + t + blob)
PY
mkdir back
"$WAVG" convert -q np.safetensors --format tfjs -o back/weights.json
/usr/bin/python3 - <<'PY'
import json, os, numpy as np
m = json.load(open("back/weights.json"))
assert "format" not in m and "modelTopology" not in m
g = m["weightsManifest"][0]
assert g["paths"] == ["weights-shard1of1.bin"]
buf = open("back/weights-shard1of1.bin", "rb").read()
want = {"x": np.float32([[1.5, -2], [0.25, 8]]), "n": np.int32([3, -4, 5]), "flag": np.array([True, False])}
at = 0
for w in g["weights"]:
    a = want[w["name"]]
    assert w["shape"] == list(a.shape) and w["dtype"] == {"f": "float32", "i": "int32", "b": "bool"}[a.dtype.kind]
    assert buf[at:at + a.nbytes] == a.tobytes(), w["name"]
    at += a.nbytes
assert at == len(buf) and len(g["weights"]) == 3
print("ok")
PY
