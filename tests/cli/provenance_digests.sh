# Every output format records each input's file name and its XXH3-128 (by default) or SHA-256 (--hash sha256), hashed on
# background threads while the merge runs; safetensors lays out its header with placeholder digests and rewrites it.
# Checked against Python's xxhash module and hashlib and the format's own reader (h5py, json, struct), independently of
# wavg. The safetensors inputs are written with an odd header length, so their float64 data is not 8-byte aligned: wavg
# must copy those blocks instead of reading them in place, and the mean must still be exact.
/usr/bin/python3 -c 'import h5py, numpy, xxhash' 2>/dev/null || { echo "no h5py/numpy/xxhash"; exit 77; }
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
"$WAVG" merge -q --hash sha256 node1.h5 node2.h5 node3.h5 -o sha.h5 || exit 1
"$WAVG" merge -q --hash sha256 s1.safetensors s2.safetensors s3.safetensors -o sha.safetensors || exit 1
/usr/bin/python3 - <<'PY'
import hashlib, json, struct, h5py, numpy as np, xxhash
def digests(entry):
    return [{k: v for k, v in d.items()} for d in json.loads(entry)]
def want(names, algo="xxh3_128"):
    fn = xxhash.xxh3_128_hexdigest if algo == "xxh3_128" else lambda b: hashlib.sha256(b).hexdigest()
    return [{"file": n, algo: fn(open(n, "rb").read())} for n in names]
def st_meta(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    return raw, n, json.loads(raw[8:8 + n])
nodes = ["node1.h5", "node2.h5", "node3.h5"]
sts = [f"s{k}.safetensors" for k in (1, 2, 3)]
for path, algo in (("out.h5", "xxh3_128"), ("sha.h5", "sha256")):
    with h5py.File(path, "r") as f:
        v = f.attrs["wavg_inputs"]
        assert digests(v if isinstance(v, str) else v.decode()) == want(nodes, algo), path
assert digests(st_meta("sha.safetensors")[2]["__metadata__"]["wavg_inputs"]) == want(sts, "sha256"), "st sha256"
assert digests(json.load(open("out.json"))["metadata"]["wavg_inputs"]) == want(nodes), "wavg JSON"
raw, n, header = st_meta("out.safetensors")
assert digests(header["__metadata__"]["wavg_inputs"]) == want(sts), "st"
lo, hi = header["w"]["data_offsets"]
got = np.frombuffer(raw[8 + n + lo:8 + n + hi], dtype=np.float64)
assert got.tobytes() == (np.arange(1000, dtype=np.float64) * 2).tobytes(), "mean of unaligned inputs"
print("digests match xxhash and hashlib in HDF5, wavg JSON and safetensors; unaligned safetensors mean exact")
PY
# --hash none and its alias --no-hash: the inputs are named without digests.
"$WAVG" merge -q --hash none node1.h5 node2.h5 -o none.json || exit 1
"$WAVG" merge -q --no-hash node1.h5 node2.h5 -o nohash.json || exit 1
/usr/bin/python3 -c '
import json
for path in ("none.json", "nohash.json"):
    got = json.loads(json.load(open(path))["metadata"]["wavg_inputs"])
    assert got == [{"file": "node1.h5"}, {"file": "node2.h5"}], got
print("--hash none, --no-hash: names without digests")'
