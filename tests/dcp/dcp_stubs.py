"""Stands in for torch's DCP metadata classes so that a .metadata pickle loads (and dumps again) without torch: the
classes are stubbed under their own module names, so a pickle names exactly the globals torch.distributed.checkpoint
writes. Import it before pickle.load (tests/dcp/dcp_edit.py, check_subset.py)."""
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
