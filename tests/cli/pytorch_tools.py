"""Helpers for the PyTorch CLI cases: torch (Debian's python3-torch) makes the inputs and checks the outputs."""
import zipfile

import torch


def flatten(obj, prefix=""):
    """Names the tensors of a loaded object by their key paths, as wavg does: dict keys and list indices joined
    with '.'. Returns {name: tensor}."""
    out = {}
    join = lambda k: f"{prefix}.{k}" if prefix else str(k)
    if isinstance(obj, torch.Tensor):
        out[prefix or "tensor"] = obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, join(k)))
    elif isinstance(obj, (list, tuple)) and any(isinstance(x, (torch.Tensor, dict, list, tuple)) for x in obj):
        for i, v in enumerate(obj):
            out.update(flatten(v, join(i)))
    return out


def mean_rounded(tensors):
    """torch's float64 mean of same-named tensors, rounded once to their dtype."""
    return torch.stack([t.double() for t in tensors]).mean(0).to(tensors[0].dtype)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


def strip(o):
    """The structure of a loaded object with every tensor replaced by its dtype, shape and stride."""
    if isinstance(o, torch.Tensor):
        return ("tensor", o.dtype, tuple(o.shape), o.stride())
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return type(o)(strip(v) for v in o)
    return o


def check_merge(out_path, in_paths, weights_only=False):
    """The output loads as input 1 does (same structure, plain values and tensor layouts); its float tensors are
    torch's float64 mean of the inputs rounded once, the others input 1's. A zip output's CRC-32s verify."""
    if zipfile.is_zipfile(out_path):
        with zipfile.ZipFile(out_path) as z:
            assert z.testzip() is None, "bad CRC-32 in " + out_path
    ins = [torch.load(p, map_location="cpu") for p in in_paths]
    out = torch.load(out_path, map_location="cpu", weights_only=weights_only)
    assert strip(out) == strip(ins[0]), "structure differs"
    flat = [flatten(x) for x in ins]
    for name, got in flatten(out).items():
        want = mean_rounded([f[name] for f in flat]) if got.is_floating_point() else flat[0][name]
        assert same(got, want), (name, got, want)
