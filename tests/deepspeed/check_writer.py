"""Checks a DeepSpeed folder that wavg merged from two checkpoints of one run, reading every file with torch.

    check_writer.py INPUT1 INPUT2 OUTPUT [INPUT1 INPUT2 OUTPUT ...]

Independent of wavg: each rank's fp32 master partitions and each moment of the optimizer's state equal
float32(float64 mean) of the inputs' (the moments' padding past the partition stays input 1's); scalar counters
(Adam's step) and every value that is no tensor (global_steps, the param_groups) are input 1's; the module's copy of
each parameter (ZeRO 1 and 2) is the averaged fp32 master cut as zero_to_fp32 cuts it, rounded to its dtype; buffers
are averaged in every rank's model states file; every zip entry's CRC-32 is right. DeepSpeed's classes in the
pickles are read as stand-ins, so torch 1.13 (Debian's) reads the files without DeepSpeed.
"""
import glob
import os
import sys
import types
import zipfile

import torch


class Stub:
    def __init__(self, *args, **kwargs):
        self.args = args

    def __setstate__(self, state):
        self.state = state

    def __eq__(self, other):
        return type(other) is Stub and vars(self) == vars(other)


class StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub


for m in ("deepspeed", "deepspeed.runtime", "deepspeed.runtime.zero", "deepspeed.runtime.zero.config",
          "deepspeed.runtime.fp16", "deepspeed.runtime.fp16.loss_scaler", "deepspeed.utils",
          "deepspeed.utils.tensor_fragment"):
    sys.modules[m] = StubModule(m)


def load(path):
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None, path + ": a bad CRC-32"
    return torch.load(path, map_location="cpu")


def mean(a, b):
    return ((a.double() + b.double()) / 2).float()


def same(x, y, what):
    assert x.dtype == y.dtype and x.shape == y.shape and torch.equal(x, y), what


def state_of(osd, stage, g):
    base = osd["base_optimizer_state"] if stage <= 2 else osd["optimizer_state_dict"]
    return base[g] if isinstance(base, list) else base["state"][g]


def check_optim(a, b, o, name):
    osd_a, osd_b, osd_o = (x["optimizer_state_dict"] for x in (a, b, o))
    stage = 3 if "fp32_flat_groups" in osd_a else 2
    key = "fp32_flat_groups" if stage == 3 else "single_partition_of_fp32_groups"
    for g, (pa, pb, po) in enumerate(zip(osd_a[key], osd_b[key], osd_o[key])):
        same(po, mean(pa, pb), f"{name}: {key}[{g}]")
        sa, sb, so = (state_of(x, stage, g) for x in (osd_a, osd_b, osd_o))
        assert list(so) == list(sa), name
        for k, va in sa.items():
            if torch.is_tensor(va) and va.dim() > 0:
                n = pa.numel()
                same(so[k][:n], mean(va[:n], sb[k][:n]), f"{name}: {k} of group {g}")
                same(so[k][n:], va[n:], f"{name}: {k}'s padding of group {g}")
            elif torch.is_tensor(va):
                same(so[k], va, f"{name}: {k} of group {g} (input 1's)")
            else:
                assert so[k] == va, f"{name}: {k}"
    for k in osd_a:
        if k not in (key, "base_optimizer_state", "optimizer_state_dict"):
            assert repr(osd_o[k]) == repr(osd_a[k]) or osd_o[k] == osd_a[k], f"{name}: {k}"
    return stage, [t for t in osd_o[key]]


def check(in1, in2, out):
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(in1, "*.pt")))
    assert names == sorted(os.path.basename(p) for p in glob.glob(os.path.join(out, "*.pt"))), out
    partitions = []
    for name in (n for n in names if n.endswith("_optim_states.pt")):
        stage, parts = check_optim(*(load(os.path.join(d, name)) for d in (in1, in2, out)), name)
        partitions.append(parts)
    for name in (n for n in names if n.endswith("_model_states.pt")):
        a, b, o = (load(os.path.join(d, name)) for d in (in1, in2, out))
        for k in a:
            if k != "module":
                assert repr(o[k]) == repr(a[k]), f"{name}: {k} (input 1's)"
        shapes = a["param_shapes"]
        flat = torch.cat([p for parts in zip(*partitions) for p in parts]) if stage <= 2 else None
        offset = 0
        for k, va in a["module"].items():
            if k in a["buffer_names"]:
                same(o["module"][k], mean(va, b["module"][k]), f"{name}: buffer {k}")
            elif stage <= 2:  # one param group: the ranks' partitions end to end hold the parameters in order
                n = shapes[0][k].numel()
                same(o["module"][k], flat[offset:offset + n].reshape(shapes[0][k]).to(va.dtype), f"{name}: {k}")
                offset += n
            else:
                same(o["module"][k], va, f"{name}: {k} (ZeRO 3 keeps no values in the module)")


if __name__ == "__main__":
    for i in range(1, len(sys.argv), 3):
        check(*sys.argv[i:i + 3])
        print("ok", sys.argv[i + 2])
