# G1 (Pima MLP 8-12-8-1) across Keras 2 full models, Keras 2 save_weights, Keras 3 .weights.h5 and Keras 3's legacy
# .h5: no two share names, so a name merge fails and says that --match order would pair them; with --match order
# each model tensor is numpy's float64 mean of the tensors at the same position (read here with h5py in each
# file's own layer order), and the optimizer state, which Keras 2 and 3 keep differently, is input 1's.
R=$SHARED/real-checkpoints
[ -d "$R" ] || { echo "no $R"; exit 77; }
out=$PWD
cd "$R"
set -- ebot64-pima-epochs/weights.best.hdf5 ebot64-pima-epochs/weights-improvement-145-0.75.hdf5 \
  ebot64-pima-epochs/model.h5 pima-k3-siva1204tharsh/model.weights.h5 pima-k3-weights-shivaspark/model.weights.h5 \
  pima-k3-siva1204tharsh/model_legacy_keras341.h5
code=0
"$WAVG" merge "$@" -o "$out/byname.h5" 2>"$out/err" || code=$?
echo "by name: exit $code"
head -n 1 "$out/err"
"$WAVG" merge "$@" --match order -o "$out/g1.h5" >/dev/null 2>"$out/warnings"
grep -c "the output keeps input 1's optimizer state" "$out/warnings"
/usr/bin/python3 - "$out/g1.h5" "$@" <<'PY'
import sys
import h5py
import numpy as np

def model_tensors(path):
    with h5py.File(path, "r") as f:
        if "layers" in f:  # Keras 3: layers in model order (dense, dense_1, dense_2), variables 0, 1
            return [f[f"layers/{l}/vars/{i}"][()] for l in ("dense", "dense_1", "dense_2") for i in (0, 1)]
        g = f["model_weights"] if "model_weights" in f else f
        names = [n.decode() if isinstance(n, bytes) else n for n in g.attrs["layer_names"]]
        out = []
        for layer in names:
            for w in g[layer].attrs["weight_names"]:
                out.append(g[layer][w.decode() if isinstance(w, bytes) else w][()])
        return out

out_path, inputs = sys.argv[1], sys.argv[2:]
tensors = [model_tensors(p) for p in inputs]
got = model_tensors(out_path)
assert len(got) == 6
for i in range(6):
    want = np.mean(np.stack([t[i] for t in tensors]).astype(np.float64), axis=0).astype(np.float32)
    assert got[i].dtype == np.float32 and got[i].tobytes() == want.tobytes(), i
with h5py.File(out_path, "r") as o, h5py.File(inputs[0], "r") as first:
    names = []
    first["optimizer_weights"].visititems(lambda n, x: names.append(n) if isinstance(x, h5py.Dataset) else None)
    assert len(names) == 13
    for n in names:
        got, want = o["optimizer_weights"][n][()], first["optimizer_weights"][n][()]
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), n
    assert o.attrs["wavg_command"] == "merge"
print("ok")
PY
