"""Writes the torch 2 samples of dtypes without a typed storage (README.md beside this script).

torch.save stores uint16, uint32 and uint64 tensors (and float8, complex32, bits) with
torch._utils._rebuild_tensor_v3 over an UntypedStorage. a.pt and b.pt (k = 1, 2) hold closed-form values of each,
contiguous, transposed (strides (1, 2)), a slice at a storage offset, a Parameter, one with a Python attribute, and
a float32 tensor that a mean averages; f8.pt holds a float8_e4m3fn tensor; neg.pt a float32 negative view
(_neg_view: metadata {'neg': True}). expected.npz holds the same values as numpy arrays (made by numpy from the
formulas, not from the .pt files), which the CLI tests compare wavg's outputs with. The script checks that torch.load(weights_only=True) gives those values and that each uint tensor is
pickled with _rebuild_tensor_v3, then prints the versions used.

    /work/venvs/torch/bin/python samples/torch_uint/make_uint.py
"""
import os
import pickletools
import sys
import zipfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def values(k):
    """The closed forms of input k as numpy arrays, C order (the shapes torch.load gives)."""
    u16 = np.array([[0, 1, 32767], [32768 + k, 65534, 65535 - k]], dtype=np.uint16)
    u32 = np.array([4294967295 - k, 2147483648 + k, k, 123456789 * k], dtype=np.uint32)
    # Row-major [[2^64 - 1 - k, 2^63 + k], [2^53 + 1, k]], saved transposed: the file keeps strides (1, 2).
    u64 = np.array([[2**64 - 1 - k, 2**63 + k], [2**53 + 1, k]], dtype=np.uint64).T.copy()
    base = np.arange(8, dtype=np.uint16) * 4099 + k  # a storage of 8 uint16; the file's tensor is [3:6]
    w = np.array([1.0, 2.0, -3.0], dtype=np.float32) + np.float32(k / 2)
    step = np.array([1000 * k, 2**32 - 1], dtype=np.uint32)
    tagged = np.array([7 * k, 65535], dtype=np.uint16)
    return {"u16": u16, "u32": u32, "u64": u64, "u16_slice": base[3:6].copy(), "w": w, "opt.step": step,
            "tagged": tagged}


def tensors(k):
    """The state dict torch.save writes for input k."""
    v = values(k)
    u64 = torch.from_numpy(v["u64"].T.copy()).t()  # transposed view: stride (1, 2)
    base = torch.from_numpy((np.arange(8, dtype=np.uint16) * 4099 + k).astype(np.uint16))
    tagged = torch.from_numpy(v["tagged"])
    tagged.note = "a Python attribute"  # pickled with _rebuild_from_type_v2(_rebuild_tensor_v3, torch.Tensor, ...)
    return {"u16": torch.from_numpy(v["u16"]), "u32": torch.from_numpy(v["u32"]), "u64": u64,
            "u16_slice": base[3:6], "w": torch.from_numpy(v["w"]),
            "opt": {"step": torch.nn.Parameter(torch.from_numpy(v["opt.step"]), requires_grad=False)},
            "tagged": tagged}


def rebuild_calls(obj):
    """The functions torch.save's data.pkl of `obj` names (each once: the pickle's memo repeats them)."""
    torch.save(obj, "/tmp/wavg_make_uint.pt")
    with zipfile.ZipFile("/tmp/wavg_make_uint.pt") as z:
        pkl = z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))
    os.remove("/tmp/wavg_make_uint.pt")
    return {a for op, a, _ in pickletools.genops(pkl) if op.name == "GLOBAL" and "_rebuild" in a}


def flat(obj, prefix=""):
    if isinstance(obj, dict):
        out = {}
        for key, val in obj.items():
            out.update(flat(val, f"{prefix}.{key}" if prefix else key))
        return out
    return {prefix: obj}


def main():
    expected = {}
    for k, name in ((1, "a"), (2, "b")):
        path = os.path.join(HERE, f"{name}.pt")
        t = tensors(k)
        assert t["u64"].stride() == (1, 2) and t["u16_slice"].storage_offset() == 3
        torch.save(t, path)
        loaded = flat(torch.load(path, weights_only=True))
        for key, want in values(k).items():
            got = loaded[key]
            assert got.dtype == getattr(torch, str(want.dtype)) and tuple(got.shape) == want.shape, key
            assert np.array_equal(got.detach().numpy(), want), key
            expected[f"{name}/{key}"] = want
        assert loaded["u64"].stride() == (1, 2) and loaded["u16_slice"].storage_offset() == 3
        assert "torch._tensor _rebuild_from_type_v2" in rebuild_calls(t["tagged"])
        for key, tensor in flat(t).items():
            v3 = "torch._utils _rebuild_tensor_v3" in rebuild_calls(tensor)
            assert v3 == (tensor.dtype != torch.float32), key
    f8 = os.path.join(HERE, "f8.pt")
    scale = torch.tensor([0.5, -2.0]).to(torch.float8_e4m3fn)
    torch.save({"w": torch.ones(2), "scale": scale}, f8)
    assert "torch._utils _rebuild_tensor_v3" in rebuild_calls(scale)
    # A negative view: the storage holds 0, 1, 2 and the pickle's metadata {'neg': True}; torch.load negates them.
    neg = os.path.join(HERE, "neg.pt")
    torch.save({"w": torch.arange(3.0)._neg_view()}, neg)
    with zipfile.ZipFile(neg) as z:
        assert np.array_equal(np.frombuffer(z.read("neg/data/0"), dtype=np.float32), [0, 1, 2])
    assert torch.equal(torch.load(neg, weights_only=True)["w"], torch.tensor([-0.0, -1.0, -2.0]))
    np.savez(os.path.join(HERE, "expected.npz"), **expected)
    print(f"torch {torch.__version__}, numpy {np.__version__}, Python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
