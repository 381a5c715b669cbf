# Provenance names each input as given on the command line, so two best_model.h5 of different runs stay apart, and
# a TF.js input's fingerprint covers model.json and its shards: two TF.js models with the same model.json and
# different weights get different digests, each Python hashlib's SHA-256 of model.json followed by the shards.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
mkdir -p run1 run2 tfa tfb
cp "$SAMPLES/mlp/node1.h5" run1/best_model.h5
cp "$SAMPLES/mlp/node2.h5" run2/best_model.h5
cp "$SAMPLES"/tfjs/a/* tfa/
cp "$SAMPLES"/tfjs/a/model.json tfb/
/usr/bin/python3 - <<'PY'
import glob, os
for p in sorted(glob.glob("tfa/*.bin")):  # the same shapes, other weights
    data = bytearray(open(p, "rb").read())
    data[0] ^= 0x40
    open(os.path.join("tfb", os.path.basename(p)), "wb").write(bytes(data))
PY
"$WAVG" merge -q run1/best_model.h5 "$PWD/run2/best_model.h5" -o avg.h5
"$WAVG" merge -q --hash sha256 tfa/model.json tfb/model.json -o avg.safetensors
/usr/bin/python3 - "$PWD" <<'PY'
import glob, hashlib, json, struct, sys
import h5py
with h5py.File("avg.h5", "r") as f:
    v = f.attrs["wavg_inputs"]
    files = [d["file"] for d in json.loads(v if isinstance(v, str) else v.decode())]
print(files == ["run1/best_model.h5", sys.argv[1] + "/run2/best_model.h5"])
raw = open("avg.safetensors", "rb").read()
meta = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])["__metadata__"]
listed = json.loads(meta["wavg_inputs"])
for d, model in zip(listed, ("tfa", "tfb")):
    manifest = json.load(open(f"{model}/model.json"))["weightsManifest"]
    parts = [f"{model}/model.json"] + [f"{model}/{p}" for g in manifest for p in g["paths"]]
    want = hashlib.sha256(b"".join(open(p, "rb").read() for p in parts)).hexdigest()
    print(d["file"], d["sha256"] == want, len(parts) - 1, "shards")
print(listed[0]["sha256"] != listed[1]["sha256"])
PY
