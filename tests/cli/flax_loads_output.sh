# flax and numpy themselves read what wavg writes: the merged TrainState is restored by
# flax.serialization.from_bytes into a TrainState built as make_jax.py builds it, its values equal to numpy's mean
# and a training step runs on it; msgpack_restore reads the merged dtypes and chunked trees; a Flax file made from
# an .npz (nested maps from the names) restores to the same nested dict; numpy.load reads the merged .npz files.
# flax is not a Debian package: set WAVG_FLAX_PYTHON to a python with flax (e.g. a venv with flax 0.12.8); without
# it the test is skipped.
PY=${WAVG_FLAX_PYTHON:-}
[ -n "$PY" ] && "$PY" -c 'import flax' 2>/dev/null || { echo "no WAVG_FLAX_PYTHON with flax"; exit 77; }
J=$SAMPLES/jax
for n in train dtypes chunked; do "$WAVG" merge -q $J/${n}_a.msgpack $J/${n}_b.msgpack -o $n.msgpack; done
"$WAVG" convert -q $J/params_a.npz -o from_npz.msgpack
"$WAVG" merge -q $J/packed_a.npz $J/packed_b.npz -o packed.npz
JAX_PLATFORMS=cpu "$PY" - "$J" <<'PY' 2>/dev/null
import sys
import jax, jax.numpy as jnp, numpy as np, optax
from flax import serialization
from flax.training import train_state
sys.path.insert(0, sys.argv[1])
import make_jax
j = sys.argv[1]
def mean(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        return a  # --int-policy first
    return ((a.astype(np.float64) + b.astype(np.float64)) / 2).astype(a.dtype)
# The TrainState: from_bytes needs a target of the same structure, as a restoring training script builds it.
t = make_jax.train(1, 0)["state"]
states = [serialization.from_bytes(t, open(f, "rb").read())
          for f in (f"{j}/train_a.msgpack", f"{j}/train_b.msgpack", "train.msgpack")]
a, b, got = states
assert got.step == a.step, (got.step, a.step)
want = jax.tree_util.tree_map(mean, a.params, b.params)
same = jax.tree_util.tree_map(lambda x, y: bool(np.array_equal(x, y)), got.params, want)
assert all(jax.tree_util.tree_leaves(same)), same
got_opt = jax.tree_util.tree_leaves(got.opt_state)
want_opt = jax.tree_util.tree_leaves(jax.tree_util.tree_map(mean, a.opt_state, b.opt_state))
assert all(np.array_equal(x, y) for x, y in zip(got_opt, want_opt))
grads = jax.tree_util.tree_map(jnp.ones_like, got.params)
stepped = got.apply_gradients(grads=grads)
assert stepped.step == got.step + 1
for n in ("dtypes", "chunked"):
    x, y, z = (serialization.msgpack_restore(open(f, "rb").read())
               for f in (f"{j}/{n}_a.msgpack", f"{j}/{n}_b.msgpack", f"{n}.msgpack"))
    assert jax.tree_util.tree_structure(z) == jax.tree_util.tree_structure(x), n
    for p, q, r in zip(*(jax.tree_util.tree_leaves(v) for v in (x, y, z))):
        if isinstance(p, (np.ndarray, np.generic, jax.Array)):
            w = mean(p, q)
            assert np.asarray(r).dtype == np.asarray(p).dtype and np.array_equal(np.asarray(r, np.float64),
                                                                                  np.asarray(w, np.float64)), n
        else:
            assert r == p, (n, r, p)
params = serialization.msgpack_restore(open("from_npz.msgpack", "rb").read())
npz = np.load(f"{j}/params_a.npz")
flat = {"/".join(str(k.key) for k in path): v for path, v in jax.tree_util.tree_leaves_with_path(params)}
assert sorted(flat) == sorted(npz.files) and all(np.array_equal(flat[k], npz[k]) for k in npz.files)
x, y, z = (np.load(f) for f in (f"{j}/packed_a.npz", f"{j}/packed_b.npz", "packed.npz"))
assert z.files == x.files and all(np.array_equal(z[k], mean(x[k], y[k])) for k in x.files)
print("flax restores the merged TrainState and trains on; msgpack_restore and numpy.load read the outputs")
PY
