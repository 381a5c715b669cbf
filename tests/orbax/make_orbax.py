"""Writes the small Orbax checkpoints the suite reads (tests/orbax/), with orbax-checkpoint itself.

Run with a venv holding orbax-checkpoint, flax, optax and jax[cpu] (see tests/README.md):
    XLA_FLAGS=--xla_force_host_platform_device_count=2 VENV/bin/python tests/orbax/make_orbax.py

Every value is a closed form exact in float32, so a test knows each mean without running anything:
  train_K (K = 1, 2, 3): a flax TrainState (Dense 4->3, BatchNorm, Dense 3->2; optax.adam) whose leaf number L
    (in _METADATA's order, counting every array leaf) holds element i = K/4 + L/8 + i/16 (params, batch_stats,
    mu, nu alike), opt_state count = 10*K (int32) and step = 100*K.
  Saved as train_K/ with StandardCheckpointer (OCDBT, zarr v2, zstd: Orbax's default); train 2 also as zarr2_2/,
  per-leaf zarr v2 folders (use_ocdbt=False), and train 3 as zarr3_3/, per-leaf zarr v3 (sharding_indexed, zstd).
  sharded/: {"rows": (8, 4) split over 2 devices by rows, "cols": (8, 4) split by columns}, element (r, c) =
    r*4 + c, saved as OCDBT and, in sharded_zarr3/, per-leaf zarr v3: each array in two chunks, one per device.
  codecs/: {"gzip", "blosc", "zstd"}, each (3, 5) with element i = i/4, saved per-leaf zarr v2; "gzip" and "blosc"
    rewritten by tensorstore with those compressors, the values unchanged.
"""
import json
import os
import shutil

import jax
import jax.numpy as jnp
import numpy as np
import optax
import orbax.checkpoint as ocp
import tensorstore as ts
from flax import linen as nn
from flax.training import train_state

HERE = os.path.dirname(os.path.abspath(__file__))


class Model(nn.Module):
    @nn.compact
    def __call__(self, x, train=False):
        x = nn.Dense(3)(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        return nn.Dense(2)(x)


class TrainState(train_state.TrainState):
    batch_stats: dict


def train_state_of(k):
    model = Model()
    v = model.init(jax.random.PRNGKey(0), jnp.ones((1, 4)))
    st = TrainState.create(apply_fn=model.apply, params=v['params'], tx=optax.adam(1e-3),
                           batch_stats=v['batch_stats'])
    leaves, tree = jax.tree_util.tree_flatten_with_path(st)
    counter = [0]

    def value(path, x):
        keys = [getattr(p, 'key', getattr(p, 'name', getattr(p, 'idx', None))) for p in path]
        if keys[-1] == 'count':
            return jnp.asarray(10 * k, dtype=x.dtype)
        if keys[-1] == 'step':
            return 100 * k
        n = int(np.prod(x.shape))
        L = counter[0]
        counter[0] += 1
        return jnp.asarray((k / 4 + L / 8 + np.arange(n) / 16).reshape(x.shape), dtype=x.dtype)

    return jax.tree_util.tree_map_with_path(value, st)


def fresh(path):
    shutil.rmtree(path, ignore_errors=True)
    return path


def save_pytree(path, tree, ocdbt, zarr3):
    c = ocp.Checkpointer(ocp.PyTreeCheckpointHandler(use_ocdbt=ocdbt, use_zarr3=zarr3))
    c.save(fresh(path), args=ocp.args.PyTreeSave(tree))
    c.wait_until_finished() if hasattr(c, 'wait_until_finished') else None


def main():
    assert jax.device_count() >= 2, 'run with XLA_FLAGS=--xla_force_host_platform_device_count=2'
    for k in (1, 2, 3):
        st = train_state_of(k)
        c = ocp.StandardCheckpointer()
        c.save(fresh(f'{HERE}/train_{k}'), st)
        c.wait_until_finished()
    save_pytree(f'{HERE}/zarr2_2', train_state_of(2), False, False)
    save_pytree(f'{HERE}/zarr3_3', train_state_of(3), False, True)

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ('d',))
    P = jax.sharding.PartitionSpec
    base = jnp.arange(32, dtype=jnp.float32).reshape(8, 4)
    tree = {'rows': jax.device_put(base, jax.sharding.NamedSharding(mesh, P('d', None))),
            'cols': jax.device_put(base, jax.sharding.NamedSharding(mesh, P(None, 'd')))}
    c = ocp.StandardCheckpointer()
    c.save(fresh(f'{HERE}/sharded'), tree)
    c.wait_until_finished()
    save_pytree(f'{HERE}/sharded_zarr3', tree, False, True)

    # Other compressors: one array gzip, one blosc, rewritten in place by tensorstore.
    small = jnp.arange(15, dtype=jnp.float32).reshape(3, 5) / 4
    save_pytree(f'{HERE}/codecs', {'gzip': small, 'blosc': small, 'zstd': small}, False, False)
    for name, compressor in (('gzip', {'id': 'gzip', 'level': 5}),
                             ('blosc', {'id': 'blosc', 'cname': 'lz4', 'clevel': 5,
                                   'shuffle': 1})):
        path = f'{HERE}/codecs/{name}'
        src = ts.open({'driver': 'zarr', 'kvstore': {'driver': 'file', 'path': path}}).result()
        values = src.read().result()
        meta = json.load(open(f'{path}/.zarray'))
        shutil.rmtree(path)
        dst = ts.open({'driver': 'zarr', 'kvstore': {'driver': 'file', 'path': path},
                       'metadata': {'shape': list(values.shape), 'chunks': meta['chunks'],
                                    'dtype': meta['dtype'], 'compressor': compressor}},
                      create=True).result()
        dst.write(values).result()

    # Self-check: orbax restores what it wrote, and the closed forms hold.
    back = ocp.StandardCheckpointer().restore(f'{HERE}/train_2')
    assert int(back['opt_state'][0]['count']) == 20, back['opt_state'][0]['count']
    back = ocp.StandardCheckpointer().restore(f'{HERE}/sharded')
    assert np.array_equal(np.asarray(back['cols']), np.asarray(base))
    print('ok')


if __name__ == '__main__':
    main()
