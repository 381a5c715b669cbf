# wavg align undoes a known permutation exactly: node1.h5's 8 hidden units (and their Adam slots) are reversed with
# h5py, and aligning the result back to node1.h5 gives every tensor byte for byte, the Keras structure included.
/usr/bin/python3 -c 'import h5py, numpy' 2>/dev/null || { echo "h5py or numpy missing"; exit 77; }
cp "$SAMPLES/mlp/node1.h5" node1.h5
/usr/bin/python3 - <<'PY'
import shutil
import h5py
shutil.copy("node1.h5", "b.h5")
with h5py.File("b.h5", "r+") as f:
    for prefix, suffixes in (("model_weights/dense/dense/", ("kernel:0", "bias:0")),
                             ("optimizer_weights/Adam/dense/", ("kernel/m:0", "kernel/v:0", "bias/m:0", "bias/v:0"))):
        for s in suffixes:
            d = f[prefix + s]
            d[...] = d[()][..., ::-1]
    for s in ("model_weights/dense_1/dense_1/kernel:0", "optimizer_weights/Adam/dense_1/kernel/m:0",
              "optimizer_weights/Adam/dense_1/kernel/v:0"):
        f[s][...] = f[s][()][::-1, :]
PY
"$WAVG" align b.h5 --to node1.h5 -o out.h5 --no-hash
/usr/bin/python3 - <<'PY'
import h5py
import numpy as np
with h5py.File("node1.h5", "r") as a, h5py.File("b.h5", "r") as b, h5py.File("out.h5", "r") as out:
    names = []
    a.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    assert len(names) == 13, names
    assert not np.array_equal(a["model_weights/dense/dense/kernel:0"][()], b["model_weights/dense/dense/kernel:0"][()])
    for n in names:
        assert np.asarray(a[n][()]).tobytes() == np.asarray(out[n][()]).tobytes(), n
    assert list(out["model_weights"].attrs["layer_names"]) == list(a["model_weights"].attrs["layer_names"])
PY
