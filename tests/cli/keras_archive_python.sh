# .keras archives made by Python's zipfile and h5py (the layout Keras 3 writes): wavg merges two, and the output
# is a zip of exactly metadata.json, config.json and model.weights.h5, stored; config.json is input 1's byte for
# byte, metadata.json is input 1's plus provenance, and the weights equal numpy's mean. No temporary file is left
# in $TMPDIR.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
mkdir tmp
export TMPDIR=$PWD/tmp
/usr/bin/python3 - <<'PY'
import io, json, zipfile, h5py, numpy as np
for i, scale in ((1, 1.0), (2, 3.0)):
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        f.create_group("layers/dense/vars").create_dataset(
            "0", data=np.arange(6, dtype=np.float32).reshape(2, 3) * scale)
        f["layers/dense/vars"].create_dataset("1", data=np.float32([0.5, -1, 2]) * scale)
        f.create_group("optimizer/vars").create_dataset("0", data=np.int64(10 * i))
    with zipfile.ZipFile(f"in{i}.keras", "w") as z:
        z.writestr("metadata.json", json.dumps({"keras_version": "3.5.0", "date_saved": f"day {i}"}))
        z.writestr("config.json", json.dumps({"class_name": "Sequential", "config": {"name": f"model{i}"}}))
        z.writestr("model.weights.h5", buf.getvalue())
PY
"$WAVG" merge -q in1.keras in2.keras -o out.keras
/usr/bin/python3 - <<'PY'
import io, json, zipfile, h5py, numpy as np
z = zipfile.ZipFile("out.keras")
assert [i.filename for i in z.infolist()] == ["metadata.json", "config.json", "model.weights.h5"]
assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
assert z.read("config.json") == zipfile.ZipFile("in1.keras").read("config.json")
meta = json.loads(z.read("metadata.json"))
assert meta["keras_version"] == "3.5.0" and meta["date_saved"] == "day 1" and meta["wavg_command"] == "merge", meta
assert [d["file"] for d in json.loads(meta["wavg_inputs"])] == ["in1.keras", "in2.keras"]
with h5py.File(io.BytesIO(z.read("model.weights.h5")), "r") as f:
    assert (f["layers/dense/vars/0"][()] == np.arange(6, dtype=np.float32).reshape(2, 3) * 2).all()
    assert (f["layers/dense/vars/1"][()] == np.float32([1, -2, 4])).all()
    assert f["layers/dense/vars/0"].dtype == np.float32
print("ok")
PY
[ -z "$(ls tmp)" ] || { echo "left in TMPDIR: $(ls tmp)"; exit 1; }
