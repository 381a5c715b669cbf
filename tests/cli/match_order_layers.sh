# --match order pairs layer by layer in the model's real order. A Keras 3 .keras lists dense before einsum_dense, its
# config.json and the legacy .h5's layer_names say einsum_dense comes first; both kernels are (4, 4). Files by
# Keras 3.15 (samples/keras3): the EinsumDense kernel is averaged with the EinsumDense kernel (checked with h5py).
# Then files written here with h5py: layers of different classes at one position, and a Keras 3 .weights.h5 (order
# known only per class) against a Keras 2 weights file that names no classes, are refused (exit 3, one line each);
# a by-name comparison of Keras 2 with Keras 3 leads with its summary.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
K=$SAMPLES/keras3
"$WAVG" merge -q "$K/einsum_a.keras" "$K/einsum_b.h5" --match order -o avg.keras
"$WAVG" check -v --match order "$K/einsum_a.keras" "$K/einsum_b.h5" 2>&1 >/dev/null | sed "s|$K/||"
/usr/bin/python3 - "$K" <<'PY'
import io, sys, zipfile
import h5py, numpy as np
def k3(path):
    with zipfile.ZipFile(path) as z:
        return h5py.File(io.BytesIO(z.read("model.weights.h5")), "r")
a, out = k3(f"{sys.argv[1]}/einsum_a.keras"), k3("avg.keras")
b = h5py.File(f"{sys.argv[1]}/einsum_b.h5", "r")["model_weights"]
for layer, k2 in (("einsum_dense", "einsum_dense"), ("dense", "dense_")):
    names = [n if isinstance(n, str) else n.decode() for n in b.attrs["layer_names"]]
    g = b[[n for n in names if n.startswith(k2)][0]]
    for i, w in enumerate(g.attrs["weight_names"]):
        want = ((a[f"layers/{layer}/vars/{i}"][()].astype(np.float64) + g[w][()]) / 2).astype(np.float32)
        assert out[f"layers/{layer}/vars/{i}"][()].tobytes() == want.tobytes(), (layer, i)
print("einsum_dense and dense each averaged with their own kind")
import json
def keras2(name, classes, weights_only=False):
    with h5py.File(name, "w") as f:
        g = f if weights_only else f.create_group("model_weights")
        names = [f"{c.lower()}_{i}" for i, c in enumerate(classes)]
        g.attrs["layer_names"] = [n.encode() for n in names]
        for n in names:
            d = g.create_group(n)
            d.attrs["weight_names"] = [f"{n}/kernel:0".encode()]
            d.create_dataset(f"{n}/kernel:0", data=np.ones((4, 4), np.float32))
        if not weights_only:
            f.attrs["model_config"] = json.dumps({"class_name": "Sequential", "config": {"layers": [
                {"class_name": c, "config": {"name": n}} for c, n in zip(classes, names)]}})
keras2("dd.h5", ["Dense", "Dense"])
keras2("de.h5", ["Dense", "EinsumDense"])
keras2("noclass.h5", ["Dense", "EinsumDense"], weights_only=True)
with h5py.File("k3.weights.h5", "w") as f:
    for layer in ("dense", "einsum_dense"):
        f.create_dataset(f"layers/{layer}/vars/0", data=np.ones((4, 4), np.float32))
    f.create_group("vars")
PY
set +e
"$WAVG" check --match order dd.h5 de.h5; echo "classes differ: exit $?"
"$WAVG" check --match order noclass.h5 k3.weights.h5; echo "order unknown: exit $?"
"$WAVG" check de.h5 k3.weights.h5 2>err; echo "by name: exit $?"
head -n 1 err
"$WAVG" check --match order de.h5 k3.weights.h5; echo "by class: exit $?"
