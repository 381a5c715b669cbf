# Two .keras archives of one model saved with different optimizers (Adam: iterations, learning rate and a moment
# and a velocity per weight; SGD: iterations and learning rate), made with h5py in Keras 3's layout. A plain merge
# is refused (exit 3) leading with a line that says the optimizers differ and names the flag;
# --optimizer-state first keeps input 1's whole optimizer (Adam's six variables as in input 1, or SGD's two with
# the inputs swapped), --optimizer-state drop leaves its moments out and keeps input 1's iterations and learning
# rate (as it does for inputs with one optimizer); the weights are numpy's mean every time.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import io, json, zipfile, h5py, numpy as np
kernel, bias = np.arange(6, dtype=np.float32).reshape(2, 3), np.float32([0.5, -1, 2])
for name, scale, optimizer in (("adam", 1.0, "Adam"), ("sgd", 3.0, "SGD")):
    buf = io.BytesIO()
    with h5py.File(buf, "w") as f:
        f.create_group("layers/dense/vars").create_dataset("0", data=kernel * scale)
        f["layers/dense/vars"].create_dataset("1", data=bias * scale)
        v = f.create_group("optimizer/vars")
        v.create_dataset("0", data=np.int64(10))
        v.create_dataset("1", data=np.float32(0.01))
        if optimizer == "Adam":
            for i, x in enumerate((kernel, kernel, bias, bias)):
                v.create_dataset(str(i + 2), data=x * 0.1 * (i + 1))
    config = {"class_name": "Sequential", "config": {"name": "m", "layers": []},
              "compile_config": {"optimizer": {"class_name": optimizer, "config": {"learning_rate": 0.01}}}}
    with zipfile.ZipFile(f"{name}.keras", "w") as z:
        z.writestr("metadata.json", json.dumps({"keras_version": "3.5.0"}))
        z.writestr("config.json", json.dumps(config))
        z.writestr("model.weights.h5", buf.getvalue())
PY
code=0; "$WAVG" merge -q adam.keras sgd.keras -o plain.keras 2> plain.err || code=$?
echo "plain: exit $code"
head -n 1 plain.err
"$WAVG" merge -q adam.keras sgd.keras --optimizer-state first -o first.keras
"$WAVG" merge -q sgd.keras adam.keras --optimizer-state first -o first_sgd.keras
"$WAVG" merge -q adam.keras sgd.keras --optimizer-state drop -o drop.keras
/usr/bin/python3 - <<'PY'
import io, zipfile, h5py, numpy as np
def load(path):
    with h5py.File(io.BytesIO(zipfile.ZipFile(path).read("model.weights.h5")), "r") as f:
        out = {}
        f.visititems(lambda n, x: out.__setitem__(n, x[()]) if isinstance(x, h5py.Dataset) else None)
        return out
adam, sgd = load("adam.keras"), load("sgd.keras")
kept = {n: v for n, v in adam.items() if n in ("optimizer/vars/0", "optimizer/vars/1")}
for path, want_optimizer in (("first.keras", adam), ("first_sgd.keras", sgd), ("drop.keras", kept)):
    got = load(path)
    for n in ("layers/dense/vars/0", "layers/dense/vars/1"):
        assert got[n].tobytes() == ((adam[n].astype(np.float64) + sgd[n]) / 2).astype(np.float32).tobytes(), n
    opt = {n: v for n, v in got.items() if n.startswith("optimizer/")}
    want = {n: v for n, v in want_optimizer.items() if n.startswith("optimizer/")}
    assert sorted(opt) == sorted(want), (path, sorted(opt))
    for n in want:
        assert np.asarray(opt[n]).tobytes() == np.asarray(want[n]).tobytes(), (path, n)
    print(path, len(opt), "optimizer variables")
PY
