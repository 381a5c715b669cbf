"""Writes inject_{a,b}.msgpack: flax.serialization.to_bytes of {"params": ..., "opt_state": ...} where the optimizer
is optax.inject_hyperparams(optax.adam) with learning rates 0.1 and 0.3, so opt_state holds the fields count,
hyperparams/{learning_rate,b1,b2,eps,eps_root} and inner_state/0/{count,mu,nu}. params/dense/kernel is [1, 1] and
[2, 2]; the moments are Adam's initial zeros.

Run with flax 0.12.8 / optax 0.2.8 (the versions that made the committed files):
    /work/venvs/flax/bin/python samples/jax/make_inject.py samples/jax
"""
import os
import sys

import flax.serialization
import jax.numpy as jnp
import optax

out = sys.argv[1]
for name, lr, value in (("a", 0.1, 1.0), ("b", 0.3, 2.0)):
    params = {"dense": {"kernel": jnp.full((2,), value, jnp.float32)}}
    state = optax.inject_hyperparams(optax.adam)(learning_rate=lr).init(params)
    with open(os.path.join(out, "inject_" + name + ".msgpack"), "wb") as f:
        f.write(flax.serialization.to_bytes({"params": params, "opt_state": state}))
