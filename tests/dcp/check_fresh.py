"""Checks a DCP folder that wavg wrote from a non-DCP input (tests/dcp/fresh_values.py's tensors), without torch and
without wavg: numpy, zipfile, pickle with stubs for DCP's classes (dcp_stubs.py) and torch.save's tensor rebuild.

    check_fresh.py OUT [--f16 | --passthrough]

OUT must hold .metadata, __0_0.distcp and wavg.json only; .metadata a TensorStorageMetadata per tensor of
fresh_values.py (its torch dtype, or float16 for the float ones with --f16; strided, contiguous, no grad, not
pinned), one chunk of offsets 0 and the tensor's sizes, its storage in __0_0.distcp, planner_data NAME -> (NAME,),
version "1.0.0"; each storage a torch.save archive (CRC-32s holding) of one contiguous tensor whose bytes equal the
closed form's; the storages apart from each other inside the file. --passthrough: the tensors are
fresh_values.passthrough_output()'s instead. Prints "ok".
"""
import io
import os
import pickle
import sys
import zipfile

import numpy as np

import dcp_stubs  # noqa: F401  (stubs torch's DCP classes before pickle.load)
from fresh_values import passthrough_output, values

out, f16 = sys.argv[1], "--f16" in sys.argv[2:]
TORCH = {"F32": "float32", "BF16": "bfloat16", "F16": "float16", "I64": "int64", "BOOL": "bool"}
STORAGE = {"float32": "FloatStorage", "bfloat16": "BFloat16Storage", "float16": "HalfStorage",
           "int64": "LongStorage", "bool": "BoolStorage"}
SIZE = {"float32": 4, "bfloat16": 2, "float16": 2, "int64": 8, "bool": 1}


class TensorUnpickler(pickle.Unpickler):
    """torch.save's data.pkl of one tensor: _rebuild_tensor_v2(storage, offset, size, stride, ...) as a tuple."""

    def find_class(self, module, name):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return lambda storage, offset, size, stride, grad, hooks: (storage, offset, tuple(size), tuple(stride),
                                                                         grad)
        if (module, name) == ("collections", "OrderedDict"):
            return dict
        if module == "torch" and name in STORAGE.values():
            return name
        raise pickle.UnpicklingError(f"{module}.{name}")

    def persistent_load(self, pid):
        return pid  # ('storage', class, key, location, numel)


assert sorted(os.listdir(out)) == [".metadata", "__0_0.distcp", "wavg.json"], os.listdir(out)
with open(os.path.join(out, ".metadata"), "rb") as f:
    meta = pickle.load(f)
data = open(os.path.join(out, "__0_0.distcp"), "rb").read()
want = passthrough_output() if "--passthrough" in sys.argv[2:] else values()
sd = meta.state_dict_metadata
assert list(sd) == list(want) or sorted(sd) == sorted(want), list(sd)
assert meta.planner_data == {n: (n,) for n in want}, meta.planner_data
assert meta.version == "1.0.0", meta.version
spans = []
for key, info in meta.storage_data.items():
    name = key.fqn
    dtype, a = want[name]
    torch_dtype = "float16" if f16 and dtype in ("F32", "BF16", "F16") else TORCH[dtype]
    e = sd[name]
    props = e.properties.state
    assert len(props) == 5 and props[0].name == torch_dtype and props[1].name == "torch.strided", props
    assert props[2] is False and props[3].value == 0 and props[4] is False, props
    assert tuple(e.size) == a.shape, (name, e.size)
    assert len(e.chunks) == 1 and tuple(e.chunks[0].offsets) == (0,) * a.ndim, name
    assert tuple(e.chunks[0].sizes) == a.shape, name
    assert tuple(key.offset) == (0,) * a.ndim and key.index == 0, name
    assert info.relative_path == "__0_0.distcp" and not getattr(info, "transform_descriptors", None), name
    assert 0 <= info.offset and info.offset + info.length <= len(data), name
    spans.append((info.offset, info.offset + info.length))
    z = zipfile.ZipFile(io.BytesIO(data[info.offset:info.offset + info.length]))
    assert z.testzip() is None, "a CRC-32 does not hold"
    storage, offset, size, stride, grad = TensorUnpickler(io.BytesIO(z.read("archive/data.pkl"))).load()
    assert storage[1] == STORAGE[torch_dtype] and storage[4] == a.size, (name, storage)
    assert offset == 0 and size == a.shape and grad is False, name
    assert stride == tuple(int(np.prod(a.shape[d + 1:])) for d in range(a.ndim)), (name, stride)
    got = z.read("archive/data/" + storage[2])
    assert len(got) == a.size * SIZE[torch_dtype], name
    if torch_dtype != TORCH[dtype]:  # --f16: the float values, each exact in float16
        x = (a.astype(np.uint32) << 16).view("<f4") if dtype == "BF16" else a
        a = x.astype("<f2")
    assert got == a.tobytes(), name
assert len(spans) == len(want), len(spans)
spans.sort()
assert all(b[0] >= a[1] for a, b in zip(spans, spans[1:])), spans
print("ok")
