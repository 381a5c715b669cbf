# A merge relative to a base (--base: task vectors, a federated server step) records the base in wavg_base, as
# given on the command line and fingerprinted like each input, {"file": ..., "xxh3_128" or "sha256": ...}: without
# it the provenance cannot reproduce the merge. Checked against Python's xxhash and hashlib, read back with h5py,
# json and struct, independently of wavg, for task arithmetic (HDF5), TIES with --hash sha256 (safetensors, whose
# header is laid out before the digests are known), a FedAdam step (wavg JSON) and --hash none; a merge without
# --base has no wavg_base.
/usr/bin/python3 -c 'import h5py, xxhash' 2>/dev/null || { echo "no h5py/xxhash"; exit 77; }
cp "$SAMPLES/mlp/node1.h5" "$SAMPLES/mlp/node2.h5" "$SAMPLES/mlp/node3.h5" .
mkdir -p run
cp "$SAMPLES/mlp/node3.h5" run/base.h5
"$WAVG" merge -q node1.h5 node2.h5 --base ./run/base.h5 --method task-arithmetic -o ta.h5
"$WAVG" merge -q --hash sha256 node1.h5 node2.h5 --base node3.h5 --method ties --density 0.5 -o ties.safetensors
"$WAVG" merge -q node1.h5 node2.h5 --base node3.h5 --server-opt adam --state server.h5 -o fed.json
"$WAVG" merge -q --hash none node1.h5 --base run/base.h5 --method task-arithmetic -o none.json
"$WAVG" merge -q node1.h5 node2.h5 -o plain.json
/usr/bin/python3 - <<'PY'
import hashlib, json, struct, h5py, xxhash
def xxh(n): return xxhash.xxh3_128_hexdigest(open(n, "rb").read())
def sha(n): return hashlib.sha256(open(n, "rb").read()).hexdigest()
def h5_meta(path):
    with h5py.File(path, "r") as f:
        return {k: (v if isinstance(v, str) else v.decode()) for k, v in f.attrs.items() if k.startswith("wavg_")}
def st_meta(path):
    raw = open(path, "rb").read()
    return json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])["__metadata__"]
def json_meta(path): return json.load(open(path))["metadata"]
cases = (
    ("ta.h5", h5_meta, {"file": "./run/base.h5", "xxh3_128": xxh("run/base.h5")},
     [{"file": n, "xxh3_128": xxh(n)} for n in ("node1.h5", "node2.h5")]),
    ("ties.safetensors", st_meta, {"file": "node3.h5", "sha256": sha("node3.h5")},
     [{"file": n, "sha256": sha(n)} for n in ("node1.h5", "node2.h5")]),
    ("fed.json", json_meta, {"file": "node3.h5", "xxh3_128": xxh("node3.h5")},
     [{"file": n, "xxh3_128": xxh(n)} for n in ("node1.h5", "node2.h5")]),
    ("none.json", json_meta, {"file": "run/base.h5"}, [{"file": "node1.h5"}]),
)
for path, read, base, inputs in cases:
    meta = read(path)
    assert json.loads(meta["wavg_base"]) == base, (path, meta["wavg_base"], base)
    assert json.loads(meta["wavg_inputs"]) == inputs, (path, meta["wavg_inputs"])
    print(path, "records its base:", json.loads(meta["wavg_base"])["file"])
assert "wavg_base" not in json_meta("plain.json")
print("plain.json: no base, no wavg_base")
PY
