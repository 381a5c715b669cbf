"""Makes the small JAX files of samples/jax with flax and numpy themselves (run with a python that has flax; the
committed files were made with flax 0.12.8, jax 0.10.2, optax 0.2.8, msgpack 1.2.4 and numpy 2.4.6, CPU):

    /work/venvs/flax/bin/python samples/jax/make_jax.py samples/jax

train_a/b.msgpack   flax.serialization.to_bytes of a flax.training TrainState (an MLP with BatchNorm, Adam state,
                    the step counter) after 1 and 3 steps from different seeds, as flax.training.checkpoints saves it
dtypes_a/b.msgpack  msgpack_serialize of a tree with float16, bfloat16, float64, int64 and bool arrays, a numpy
                    scalar (ext 3), a list of arrays (a msgpack array) and Python values (float, str, None, complex)
chunked_a/b.msgpack msgpack_serialize with flax's MAX_CHUNK_SIZE lowered to 64 bytes, so its arrays are written in
                    flax's chunked form (__msgpack_chunked_array__) by flax's own code
params_a/b.npz      numpy.savez of train_a/b's parameters, named by key path (params/Dense_0/kernel)
packed_a/b.npz      numpy.savez_compressed of the same
Everything is seeded, so regenerating gives the same values."""
import os
import sys

import flax
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn
from flax import serialization
from flax.training import train_state


class Mlp(nn.Module):
    @nn.compact
    def __call__(self, x, train=False):
        x = nn.Dense(4)(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        return nn.Dense(2)(nn.relu(x))


def train(seed, steps):
    model = Mlp()
    variables = model.init(jax.random.PRNGKey(seed), jnp.ones((1, 3)))
    state = train_state.TrainState.create(apply_fn=model.apply, params=variables["params"], tx=optax.adam(0.1))
    stats = variables["batch_stats"]
    x = jax.random.normal(jax.random.PRNGKey(100 + seed), (8, 3))
    for _ in range(steps):
        def loss(p):
            y, upd = model.apply({"params": p, "batch_stats": stats}, x, train=True, mutable=["batch_stats"])
            return jnp.mean(y ** 2), upd
        (_, upd), grads = jax.value_and_grad(loss, has_aux=True)(state.params)
        state = state.apply_gradients(grads=grads)
        stats = upd["batch_stats"]
    return {"state": state, "batch_stats": stats}


def flat(tree, prefix=""):
    out = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            out.update(flat(v, prefix + k + "/"))
        else:
            out[prefix + k] = np.asarray(v)
    return out


def dtypes(seed):
    rng = np.random.default_rng(seed)
    return {"h": rng.standard_normal((2, 3)).astype(np.float16),
            "bf": jnp.asarray(rng.standard_normal(5), dtype=jnp.bfloat16),
            "d": rng.standard_normal(4),
            "i": np.arange(3, dtype=np.int64) * (seed + 1),
            "mask": np.array([True, False, bool(seed)]),
            "s": np.float32(seed + 0.5),
            "layers": [rng.standard_normal(2).astype(np.float32), rng.standard_normal((1, 2)).astype(np.float32)],
            "lr": 0.001, "name": "adam", "nothing": None, "z": complex(1, 2)}


def main(out):
    for tag, seed, steps in (("a", 1, 1), ("b", 2, 3)):
        t = train(seed, steps)
        with open(os.path.join(out, f"train_{tag}.msgpack"), "wb") as f:
            f.write(serialization.to_bytes(t["state"]))
        params = serialization.to_state_dict(t["state"].params)
        np.savez(os.path.join(out, f"params_{tag}.npz"), **flat({"params": params}))
        np.savez_compressed(os.path.join(out, f"packed_{tag}.npz"), **flat({"params": params}))
        with open(os.path.join(out, f"dtypes_{tag}.msgpack"), "wb") as f:
            f.write(serialization.msgpack_serialize(dtypes(seed)))
        rng = np.random.default_rng(10 + seed)
        saved = serialization.MAX_CHUNK_SIZE
        serialization.MAX_CHUNK_SIZE = 64
        try:
            tree = {"big": rng.standard_normal((5, 7)).astype(np.float32), "small": rng.standard_normal(3)}
            with open(os.path.join(out, f"chunked_{tag}.msgpack"), "wb") as f:
                f.write(serialization.msgpack_serialize(tree))
        finally:
            serialization.MAX_CHUNK_SIZE = saved
    print("flax", flax.__version__, "jax", jax.__version__, "optax", optax.__version__, "numpy", np.__version__)


if __name__ == "__main__":
    main(sys.argv[1])
