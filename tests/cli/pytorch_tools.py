"""Helpers for the PyTorch CLI cases: torch (Debian's python3-torch) makes the inputs and checks the outputs."""
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
    elif isinstance(obj, (list, tuple)) and any(isinstance(x, torch.Tensor) or isinstance(x, (dict, list, tuple)) for x in obj):
        for i, v in enumerate(obj):
            out.update(flatten(v, join(i)))
    return out


def mean_rounded(tensors):
    """torch's float64 mean of same-named tensors, rounded once to their dtype."""
    return torch.stack([t.double() for t in tensors]).mean(0).to(tensors[0].dtype)


def same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
