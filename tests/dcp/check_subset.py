"""Checks a DCP folder that wavg wrote leaving tensors out, without torch and without wavg: numpy, zipfile, pickle
with stubs for DCP's classes (dcp_stubs.py) and for torch.save's tensor rebuild.

    check_subset.py [--also=FILE,...] OUT INPUT1 K STEP NAME...

OUT must hold exactly the tensors NAME... (and every torch.save'd value of INPUT1, byte for byte), each with
INPUT1's chunks and properties and the closed form of samples/dcp/make_dcp.py at mean index K (Adam's step counters
STEP); every rank file it names must be made of exactly the storages it names, back to back (nothing left over of
the left-out tensors), each chunk a torch.save archive whose CRC-32s hold; planner_data must be INPUT1's for the
names kept; the folder must hold nothing else but wavg.json. Prints the files and "ok".
"""
import io
import os
import pickle
import sys
import zipfile

import numpy as np

import dcp_stubs  # noqa: F401  (stubs torch's DCP classes before pickle.load)

args = sys.argv[1:]
also = args.pop(0)[len("--also="):].split(",") if args[0].startswith("--also=") else []
out, first, k, step = args[0], args[1], float(args[2]), float(args[3])
names = set(args[4:])


def load(folder):
    with open(os.path.join(folder, ".metadata"), "rb") as f:
        return pickle.load(f)


def storages(meta):
    """{(fqn, chunk offsets or None): (file, offset, length)}"""
    got = {}
    for key, info in meta.storage_data.items():
        at = None if getattr(key, "offset", None) is None else tuple(key.offset)
        got[(key.fqn, at)] = (info.relative_path, info.offset, info.length)
    return got


def properties(entry):
    """TensorProperties' state with the stubs' dtype, layout and memory format as their names and values."""
    return tuple(getattr(v, "name", getattr(v, "value", v)) for v in entry.properties.state)


def is_tensor(entry):
    return hasattr(entry, "chunks")


class ChunkUnpickler(pickle.Unpickler):
    """torch.save's data.pkl of one tensor: _rebuild_tensor_v2(storage, offset, size, stride, ...) as a tuple."""

    def find_class(self, module, name):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return lambda storage, offset, size, stride, *rest: (storage, offset, tuple(size), tuple(stride))
        if (module, name) == ("collections", "OrderedDict"):
            return dict
        if module == "torch" and name == "FloatStorage":
            return name
        raise pickle.UnpicklingError(f"{module}.{name}")

    def persistent_load(self, pid):
        return pid  # ('storage', class, key, location, numel)


def chunk_values(blob, sizes):
    z = zipfile.ZipFile(io.BytesIO(blob))
    assert z.testzip() is None, "a CRC-32 does not hold"
    pkl = next(n for n in z.namelist() if n.endswith("/data.pkl"))
    top = pkl[: -len("data.pkl")]
    storage, offset, size, stride = ChunkUnpickler(io.BytesIO(z.read(pkl))).load()
    assert storage[1] == "FloatStorage" and size == tuple(sizes), (storage, size, sizes)
    data = np.frombuffer(z.read(top + "data/" + storage[2]), dtype="<f4")
    n = int(np.prod(sizes))
    assert offset == 0 and data.size >= n, (offset, data.size, n)
    return data[:n].reshape(sizes)


def want(name):
    """The closed form at mean index k (make_dcp.py)."""
    shapes = {"fc1.weight": (5, 3), "fc1.bias": (5,), "fc2.weight": (4, 5), "fc2.bias": (4,)}
    if name == "model.scale":
        return k + np.arange(5) / 8
    if name.startswith("model."):
        p = list(shapes).index(name[6:])
        base, step_ = k + p, 1 / 16
    else:
        p, key = int(name.split(".")[2]), name.split(".")[3]
        if key == "step":
            return np.array(step)
        base, step_ = {"exp_avg": (-k / 2 + p, 1 / 32), "exp_avg_sq": (k / 4 + p, 1 / 64)}[key]
    shape = list(shapes.values())[p]
    return base + np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) * step_


meta, inp = load(out), load(first)
where, where_in = storages(meta), storages(inp)
sd, sd_in = meta.state_dict_metadata, inp.state_dict_metadata
assert {n for n, e in sd.items() if is_tensor(e)} == names, sorted(sd)
assert {n for n, e in sd.items() if not is_tensor(e)} == {n for n, e in sd_in.items() if not is_tensor(e)}
assert set(meta.planner_data) == set(sd) and all(meta.planner_data[n] == inp.planner_data[n] for n in sd)
assert len(where) == sum(len(e.chunks) if is_tensor(e) else 1 for e in sd.values()), "storages of left-out tensors"

files = {}
for (fqn, at), (rel, offset, length) in where.items():
    files.setdefault(rel, []).append((offset, length))
    blob = open(os.path.join(out, rel), "rb").read()[offset:offset + length]
    if at is None:  # a torch.save'd value: input 1's bytes
        rel1, offset1, length1 = where_in[(fqn, None)]
        assert blob == open(os.path.join(first, rel1), "rb").read()[offset1:offset1 + length1], fqn
for rel, spans in files.items():  # the storages tile each rank file: nothing else in it
    spans.sort()
    end = 0
    for offset, length in spans:
        assert offset == end, (rel, offset, end)
        end += length
    assert end == os.path.getsize(os.path.join(out, rel)), (rel, end)
    assert rel in {r for r, _, _ in where_in.values()}, rel  # one of input 1's rank files

for name in names:
    e, e_in = sd[name], sd_in[name]
    assert tuple(e.size) == tuple(e_in.size) and properties(e) == properties(e_in), name
    assert [(tuple(c.offsets), tuple(c.sizes)) for c in e.chunks] == \
        [(tuple(c.offsets), tuple(c.sizes)) for c in e_in.chunks], name
    got = np.full(tuple(e.size), np.nan, dtype=np.float32)
    for c in e.chunks:
        rel, offset, length = where[(name, tuple(c.offsets))]
        blob = open(os.path.join(out, rel), "rb").read()[offset:offset + length]
        box = tuple(slice(o, o + s) for o, s in zip(c.offsets, c.sizes))
        got[box] = chunk_values(blob, tuple(c.sizes))
    assert np.array_equal(got, want(name).astype(np.float32)), (name, got)

listed = sorted(os.listdir(out))
assert listed == sorted([".metadata", "wavg.json"] + list(files) + also), listed
print(" ".join(listed))
print("ok")
