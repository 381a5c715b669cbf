"""The optional test's Python side (tests/cli/orbax_restore.sh), run with a venv holding orbax-checkpoint, flax,
optax and jax[cpu] (WAVG_ORBAX_PYTHON).

  restore_check.py save DIR       three TrainStates of a small model (random values), each saved by Orbax three
                                  ways: DIR/ocdbt_K (StandardCheckpointer: OCDBT), DIR/zarr_K (per-leaf zarr v3),
                                  DIR/sharded_K (OCDBT, every kernel split over two CPU devices)
  restore_check.py save2 DIR      the same TrainStates saved by two real processes (jax.distributed on the CPU,
                                  one device each, as a run on two hosts): DIR/two_K (OCDBT, every array of two rows
                                  or more split by rows, each process writing its half: ocdbt.process_0 and _1)
  restore_check.py check DIR OUT  restores the Orbax folder OUT into the TrainState and checks every float leaf
                                  equals the float64 mean of DIR/ocdbt_1..3 rounded once to float32, count and step
                                  are input 1's, and one apply_gradients step runs
  restore_check.py flax DIR F.msgpack   the same values from a Flax msgpack (flax.serialization, into the TrainState)
  restore_check.py safetensors DIR F.safetensors   the same values from a safetensors file
"""
import os
import sys

if sys.argv[1:2] != ["process"]:  # save2's processes have one device each
    os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=2")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
import orbax.checkpoint as ocp  # noqa: E402
from flax import linen as nn  # noqa: E402
from flax import serialization  # noqa: E402
from flax.training import train_state  # noqa: E402


class Model(nn.Module):
    @nn.compact
    def __call__(self, x, train=False):
        x = nn.Dense(16)(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        return nn.Dense(4)(nn.relu(x))


class TrainState(train_state.TrainState):
    batch_stats: dict


def template(seed=0):
    model = Model()
    v = model.init(jax.random.PRNGKey(seed), jnp.ones((1, 8)))
    return TrainState.create(apply_fn=model.apply, params=v["params"], tx=optax.adam(1e-3),
                             batch_stats=v["batch_stats"])


def state(k):
    st = template()
    rng = np.random.default_rng(k)

    def fill(path, x):
        name = jax.tree_util.keystr(path)
        if name.endswith("count"):
            return jnp.asarray(7 * k, dtype=x.dtype)
        if isinstance(x, int):
            return 1000 * k
        return jnp.asarray(rng.standard_normal(x.shape), dtype=x.dtype)

    return jax.tree_util.tree_map_with_path(fill, st)


def save(d):
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:2]), ("d",))
    split = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
    for k in (1, 2, 3):
        st = state(k)
        c = ocp.StandardCheckpointer()
        c.save(f"{d}/ocdbt_{k}", st)
        c.wait_until_finished()
        ocp.Checkpointer(ocp.PyTreeCheckpointHandler(use_ocdbt=False, use_zarr3=True)).save(
            f"{d}/zarr_{k}", args=ocp.args.PyTreeSave(st))
        # Every array of two rows or more split by rows over the two devices: each writes its chunk.
        sharded = jax.tree_util.tree_map(
            lambda x: jax.device_put(x, split) if hasattr(x, "shape") and x.ndim and x.shape[0] % 2 == 0 else x, st)
        c.save(f"{d}/sharded_{k}", sharded)
        c.wait_until_finished()


def save2(d):
    import socket
    import subprocess

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)  # one device per process
    procs = [subprocess.Popen([sys.executable, __file__, "process", d, str(port), str(p)], env=env) for p in (0, 1)]
    codes = [p.wait(timeout=900) for p in procs]
    assert codes == [0, 0], codes


def process(d, port, pid):
    """One of save2's processes: joins the other, then saves its shards of each TrainState."""
    jax.distributed.initialize(coordinator_address=f"127.0.0.1:{port}", num_processes=2, process_id=int(pid))
    assert jax.process_count() == 2 and jax.device_count() == 2, (jax.process_count(), jax.device_count())
    mesh = jax.sharding.Mesh(np.array(jax.devices()), ("p",))

    def global_array(x):
        if not hasattr(x, "shape"):
            return x
        x = np.asarray(x)
        spec = jax.sharding.PartitionSpec("p") if x.ndim and x.shape[0] % 2 == 0 else jax.sharding.PartitionSpec()
        return jax.make_array_from_callback(x.shape, jax.sharding.NamedSharding(mesh, spec), lambda i: x[i])

    for k in (1, 2, 3):
        st = jax.tree_util.tree_map(global_array, state(k))
        c = ocp.StandardCheckpointer()
        c.save(f"{d}/two_{k}", st)
        c.wait_until_finished()
    jax.distributed.shutdown()


def expected(d):
    ins = [ocp.StandardCheckpointer().restore(f"{d}/ocdbt_{k}", template()) for k in (1, 2, 3)]
    return ins


def compare(got, ins, what):
    leaves = [jax.tree_util.tree_leaves_with_path(x) for x in ins]
    n = 0
    for (path, g), *others in zip(jax.tree_util.tree_leaves_with_path(got), *leaves):
        name = jax.tree_util.keystr(path)
        first = others[0][1]
        g = np.asarray(g)
        if np.issubdtype(g.dtype, np.floating):
            want = np.mean(np.stack([np.asarray(o[1], dtype=np.float64) for o in others]), axis=0).astype(g.dtype)
            assert g.shape == want.shape and np.array_equal(g, want), (what, name)
            n += 1
        else:
            assert np.array_equal(g, np.asarray(first)), (what, name, g, first)
    return n


def check(d, out):
    ins = expected(d)
    got = ocp.StandardCheckpointer().restore(out, template())
    n = compare(got, ins, out)
    assert int(got.opt_state[0].count) == 7, got.opt_state[0].count
    assert int(got.step) == 1000, got.step
    grads = jax.tree_util.tree_map(jnp.ones_like, got.params)
    nxt = got.apply_gradients(grads=grads)
    assert int(nxt.step) == 1001 and int(nxt.opt_state[0].count) == 8
    print(f"{os.path.basename(out)}: {n} float arrays the mean, count and step input 1's, apply_gradients ran")


def flax(d, path):
    ins = expected(d)
    with open(path, "rb") as f:
        tree = serialization.msgpack_restore(f.read())
    # optax's EmptyState (the tuple's second item), which flax writes as {}: wavg writes it so from Orbax's None.
    assert tree["opt_state"]["1"] == {}, tree["opt_state"].keys()
    got = serialization.from_state_dict(template(), tree)
    n = compare(got, ins, path)
    print(f"{os.path.basename(path)}: {n} float arrays the mean")


def safetensors(d, path):
    import json
    import struct

    ins = expected(d)
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    count = 0
    for p, first in jax.tree_util.tree_leaves_with_path(ins[0]):
        name = "/".join(str(getattr(k, "key", getattr(k, "name", getattr(k, "idx", k)))) for k in p)
        h = header[name]
        a, b = h["data_offsets"]
        got = np.frombuffer(raw[8 + n + a:8 + n + b], dtype={"F32": np.float32, "I32": np.int32, "I64": np.int64}[h["dtype"]])
        others = [np.asarray(dict(jax.tree_util.tree_leaves_with_path(x))[p]) for x in ins]
        if got.dtype == np.float32:
            want = np.mean(np.stack([o.astype(np.float64) for o in others]), axis=0).astype(np.float32).ravel()
            count += 1
        else:
            want = np.asarray(first).ravel()
        assert np.array_equal(got, want), name
    print(f"{os.path.basename(path)}: {count} float arrays the mean")


if __name__ == "__main__":
    sys.argv[2:] = [os.path.abspath(a) if i == 0 or sys.argv[1] != "process" else a
                    for i, a in enumerate(sys.argv[2:])]  # orbax takes absolute paths
    {"save": lambda: save(sys.argv[2]), "save2": lambda: save2(sys.argv[2]),
     "process": lambda: process(sys.argv[2], sys.argv[3], sys.argv[4]), "check": lambda: check(sys.argv[2], sys.argv[3]),
     "flax": lambda: flax(sys.argv[2], sys.argv[3]),
     "safetensors": lambda: safetensors(sys.argv[2], sys.argv[3])}[sys.argv[1]]()
