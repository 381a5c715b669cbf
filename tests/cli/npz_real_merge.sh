# NumPy .npz files written by numpy itself (samples/jax, numpy 2.4.6: savez stores, savez_compressed deflates)
# merge; Debian's numpy reads the outputs, every array equal to numpy's float64 mean rounded to float32, with
# input 1's member names in input 1's order. A Flax file converts to an .npz holding the same arrays.
J=$SAMPLES/jax
"$WAVG" merge -q $J/params_a.npz $J/params_b.npz -o stored.npz
"$WAVG" merge -q $J/packed_a.npz $J/packed_b.npz -o packed.npz
"$WAVG" merge -q $J/params_a.npz $J/packed_b.npz -o mixed.npz
"$WAVG" convert -q $J/train_a.msgpack -o train.npz
PYTHONPATH=$ROOT/tests/cli /usr/bin/python3 - "$J" <<'PY'
import sys
import numpy as np
import jax_tools as jt
j = sys.argv[1]
for out, ins in (("stored.npz", ["params_a", "params_b"]), ("packed.npz", ["packed_a", "packed_b"]),
                 ("mixed.npz", ["params_a", "packed_b"])):
    a, b = (np.load(f"{j}/{n}.npz") for n in ins)
    got = np.load(out)
    assert got.files == a.files, (got.files, a.files)
    for k in a.files:
        want = jt.mean([a[k], b[k]], a[k].dtype)
        assert got[k].dtype == a[k].dtype and np.array_equal(got[k], want), k
    print(out, len(got.files), "arrays")
arrays, _ = jt.flatten(jt.load_tree(f"{j}/train_a.msgpack"))
got = np.load("train.npz")
assert got.files == list(arrays)
for k, (dtype, v) in arrays.items():
    assert got[k].dtype == np.dtype(dtype) and got[k].shape == v.shape and np.array_equal(got[k], v), k
print("train.npz", len(got.files), "arrays, first", got.files[0])
PY
