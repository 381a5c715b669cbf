# Every output format records each input's file name and SHA-256 (hashed on background threads while the merge
# runs; safetensors lays out its header with placeholder digests and rewrites it). Checked against Python's
# hashlib and the format's own reader (h5py, json, struct), independently of wavg. The safetensors inputs are
# written with an odd header length, so their float64 data is not 8-byte aligned: wavg must copy those blocks
# instead of reading them in place, and the mean must still be exact.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "no h5py/numpy"; exit 77; }
cp "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" "$SAMPLES/mlp/node3.h5" .
/usr/bin/python3 - <<'PY'
import json, struct, numpy as np
for k in (1, 2, 3):
    a = np.arange(1000, dtype=np.float64) * k
    h = json.dumps({"w": {"dtype": "F64", "shape": [1000], "data_offsets": [0, 8000]}}).encode() + b" "
    assert (8 + len(h)) % 8 != 0
    open(f"s{k}.safetensors", "wb").write(struct.pack("<Q", len(h)) + h + a.tobytes())
PY
"$WAVG" merge -q node1.h5 node2.h5 node3.h5 -o out.h5 || exit 1
"$WAVG" merge -q node1.h5 node2.h5 node3.h5 -o out.json || exit 1
"$WAVG" merge -q s1.safetensors s2.safetensors s3.safetensors -o out.safetensors || exit 1
/usr/bin/python3 - <<'PY'
import hashlib, json, struct, h5py, numpy as np
def digests(entry):
    return [(d["file"], d["sha256"]) for d in json.loads(entry)]
def want(names):
    return [(n, hashlib.sha256(open(n, "rb").read()).hexdigest()) for n in names]
nodes = ["node1.h5", "node2.h5", "node3.h5"]
with h5py.File("out.h5", "r") as f:
    v = f.attrs["wavg_inputs"]
    assert digests(v if isinstance(v, str) else v.decode()) == want(nodes), "HDF5"
assert digests(json.load(open("out.json"))["metadata"]["wavg_inputs"]) == want(nodes), "wavg JSON"
raw = open("out.safetensors", "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
assert digests(header["__metadata__"]["wavg_inputs"]) == want([f"s{k}.safetensors" for k in (1, 2, 3)]), "st"
lo, hi = header["w"]["data_offsets"]
got = np.frombuffer(raw[8 + n + lo:8 + n + hi], dtype=np.float64)
assert got.tobytes() == (np.arange(1000, dtype=np.float64) * 2).tobytes(), "mean of unaligned inputs"
print("digests match hashlib in HDF5, wavg JSON and safetensors; unaligned safetensors mean exact")
PY
# --no-hash: the inputs are named, their digests are null.
"$WAVG" merge -q --no-hash node1.h5 node2.h5 -o nohash.json || exit 1
/usr/bin/python3 -c '
import json
got = json.loads(json.load(open("nohash.json"))["metadata"]["wavg_inputs"])
assert got == [{"file": "node1.h5", "sha256": None}, {"file": "node2.h5", "sha256": None}], got
print("--no-hash: names without digests")'
