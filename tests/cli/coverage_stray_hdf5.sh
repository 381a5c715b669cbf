# The coverage rule for HDF5: a numeric dataset that no layout rule lists (here a stray one beside the layers, and
# one inside a Keras 2 layer group that its weight_names does not name) is a tensor named by its path. In each
# layout (Keras 2 model, Keras 2 weights, Keras 3 weights, and the Keras 3 weights inside a .keras archive) the
# merge averages it (1 and 2 give 1.5) instead of keeping input 1's values unnoticed.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
def keras2(f, v, root):
    g = f.require_group(root) if root else f
    g.attrs["layer_names"] = [b"dense"]
    d = g.create_group("dense")
    d.attrs["weight_names"] = [b"dense/kernel:0"]
    d.create_dataset("dense/kernel:0", data=np.full((2, 2), v, np.float32))
    d.create_dataset("dense/unlisted:0", data=np.full((2,), v, np.float32))
for tag, v in (("a", 1), ("b", 2)):
    with h5py.File(f"k2model_{tag}.h5", "w") as f:
        keras2(f, v, "model_weights")
        f.attrs["keras_version"] = "2.15.0"
        f.create_dataset("extra/stray", data=np.full((3,), v, np.float64))
    with h5py.File(f"k2weights_{tag}.h5", "w") as f:
        keras2(f, v, "")
        f.create_dataset("extra/stray", data=np.full((3,), v, np.float64))
    with h5py.File(f"k3_{tag}.weights.h5", "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.full((2, 2), v, np.float32))
        f.create_group("vars")
        f.create_dataset("layers/dense/stray", data=np.full((3,), v, np.float64))
        f.create_dataset("extra/stray", data=np.full((3,), v, np.float64))
    import zipfile
    with zipfile.ZipFile(f"k3_{tag}.keras", "w") as z:
        z.writestr("metadata.json", '{"keras_version": "3.15.1"}')
        z.writestr("config.json", '{"class_name": "Sequential", "config": {"layers": []}}')
        z.write(f"k3_{tag}.weights.h5", "model.weights.h5")
PY
for kind in k2model k2weights; do "$WAVG" merge -q ${kind}_a.h5 ${kind}_b.h5 -o ${kind}_avg.h5; done
"$WAVG" merge -q k3_a.weights.h5 k3_b.weights.h5 -o k3_avg.weights.h5
"$WAVG" merge -q k3_a.keras k3_b.keras -o k3_avg.keras
/usr/bin/python3 -c 'import zipfile
open("k3_keras_avg.weights.h5", "wb").write(zipfile.ZipFile("k3_avg.keras").read("model.weights.h5"))'
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
for out in ("k2model_avg.h5", "k2weights_avg.h5", "k3_avg.weights.h5", "k3_keras_avg.weights.h5"):
    names = []
    with h5py.File(out, "r") as f:
        f.visititems(lambda n, x: names.append(n) if isinstance(x, h5py.Dataset) else None)
        bad = [n for n in names if not np.all(f[n][()] == 1.5)]
    print(out, len(names), "datasets, not averaged:", bad)
PY
