"""Edits a DCP folder's .metadata without torch (tests/cli/dcp_*.sh): the classes the pickle names are stubbed
under their own module names, so the edited pickle names exactly the globals torch.distributed.checkpoint writes.

    dcp_edit.py FOLDER overlap|hole|past_end   (on tensor model.fc1.weight, chunked over 2 ranks)
"""
import os
import pickle
import sys
import types

META = "torch.distributed.checkpoint.metadata"
FS = "torch.distributed.checkpoint.filesystem"


def module(name, **members):
    m = types.ModuleType(name)
    for k, v in members.items():
        if isinstance(v, type):
            v.__module__, v.__qualname__ = name, k
        setattr(m, k, v)
    sys.modules[name] = m
    return m


class Size(tuple):
    def __reduce__(self):
        return (Size, (tuple(self),))


class DType:
    def __init__(self, name):
        self.name = name
        self.__module__ = "torch"  # where pickle looks the name up

    def __reduce__(self):
        return self.name


class Layout:
    def __init__(self, name):
        self.name = name

    def __reduce__(self):
        return (sys.modules["torch.serialization"]._get_layout, (self.name,))


def _get_layout(name):
    return Layout(name)


def plain(name):
    return type(name, (), {"__setstate__": lambda self, s: self.__dict__.update(s) if isinstance(s, dict) else
                           self.__dict__.update(state=s),
                           "__getstate__": lambda self: self.__dict__.get("state", self.__dict__)})


class _MEM_FORMAT_ENCODING:  # an Enum in torch, pickled as a call with its value
    def __init__(self, value):
        self.value = value

    def __reduce__(self):
        return (_MEM_FORMAT_ENCODING, (self.value,))


torch = module("torch", Size=Size)
for t in ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"):
    setattr(torch, t, DType(t))
module("torch.serialization", _get_layout=_get_layout)
_get_layout.__module__ = "torch.serialization"
module("torch.distributed")
module("torch.distributed.checkpoint")
module(META, **{n: plain(n) for n in ("Metadata", "TensorStorageMetadata", "BytesStorageMetadata",
                                      "ChunkStorageMetadata", "TensorProperties", "MetadataIndex", "StorageMeta")},
       _MEM_FORMAT_ENCODING=_MEM_FORMAT_ENCODING)
module(FS, _StorageInfo=plain("_StorageInfo"))
_MEM_FORMAT_ENCODING.__module__ = META

folder, edit = sys.argv[1], sys.argv[2]
path = os.path.join(folder, ".metadata")
with open(path, "rb") as f:
    meta = pickle.load(f)
name = "model.fc1.weight"
tensor = meta.state_dict_metadata[name]
second = tensor.chunks[1]
key = next(k for k in meta.storage_data if k.fqn == name and tuple(k.offset) == tuple(second.offsets))
if edit == "overlap":  # the second rank's rows start one row early
    second.offsets = Size((second.offsets[0] - 1,) + tuple(second.offsets[1:]))
    key.offset = second.offsets
    meta.storage_data = {k: v for k, v in meta.storage_data.items()}
elif edit == "hole":  # the metadata forgets the second rank's chunk
    del tensor.chunks[1]
elif edit == "past_end":  # its storage moved past the end of its file
    info = meta.storage_data[key]
    info.offset = os.path.getsize(os.path.join(folder, info.relative_path)) + 10
else:
    sys.exit("unknown edit " + edit)
with open(path, "wb") as f:
    pickle.dump(meta, f, protocol=4)
