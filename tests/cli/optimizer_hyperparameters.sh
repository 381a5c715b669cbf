# A learning-rate sweep: the optimizers' float scalars (Keras 3 optimizer/vars/1, Keras 2 .../learning_rate:0) are
# hyper-parameters, copied from input 1 like the iteration counter beside them (listed with -v), while the moments
# are averaged; --int-policy equal refuses inputs whose rates differ. Files written here with h5py.
/usr/bin/python3 -c 'import h5py' 2>/dev/null || { echo "h5py missing"; exit 77; }
/usr/bin/python3 - <<'PY'
import h5py, numpy as np
for tag, lr, v in (("a", 0.1, 1), ("b", 0.001, 2)):
    with h5py.File(f"k3_{tag}.weights.h5", "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.full((2,), v, np.float32))
        f.create_group("vars")
        f.create_dataset("optimizer/vars/0", data=np.int64(10 * v))
        f.create_dataset("optimizer/vars/1", data=np.float32(lr))
        f.create_dataset("optimizer/vars/2", data=np.full((2,), v, np.float32))
    with h5py.File(f"k2_{tag}.h5", "w") as f:
        g = f.create_group("model_weights")
        g.attrs["layer_names"] = [b"dense"]
        g.create_group("dense").attrs["weight_names"] = [b"dense/kernel:0"]
        g["dense"].create_dataset("dense/kernel:0", data=np.full((2,), v, np.float32))
        o = f.create_group("optimizer_weights")
        o.attrs["weight_names"] = [b"Adam/iter:0", b"Adam/learning_rate:0", b"Adam/dense/kernel/m:0"]
        o.create_dataset("Adam/iter:0", data=np.int64(10 * v))
        o.create_dataset("Adam/learning_rate:0", data=np.float32(lr))
        o.create_dataset("Adam/dense/kernel/m:0", data=np.full((2,), v, np.float32))
PY
"$WAVG" merge -v k3_a.weights.h5 k3_b.weights.h5 -o k3.weights.h5 2>&1 >/dev/null | grep 'not averaged'
"$WAVG" merge -q k2_a.h5 k2_b.h5 -o k2.h5
/usr/bin/python3 - <<'PY'
import h5py
with h5py.File("k3.weights.h5", "r") as f:
    print("keras 3: lr", f["optimizer/vars/1"][()], "moment", f["optimizer/vars/2"][()].tolist())
with h5py.File("k2.h5", "r") as f:
    o = f["optimizer_weights/Adam"]
    print("keras 2: lr", o["learning_rate:0"][()], "moment", o["dense/kernel/m:0"][()].tolist())
PY
set +e
"$WAVG" check --int-policy equal k3_a.weights.h5 k3_b.weights.h5 >/dev/null 2>err
echo "equal: exit $?"
grep -c 'optimizer/vars/1' err
