"""Writes a ZeRO stage 2 checkpoint with parameter alignment paddings, and proves it with DeepSpeed's own reader.

DeepSpeed's engine does not start on this machine's CPU, so the files are laid out as stage_1_and_2.py lays out a
bf16 run with zero_optimization.parameter_alignment on (16 // element size = 8 elements): in each param group, after
every parameter but the last, zeros up to the next multiple of 8 (recorded per parameter in
param_alignment_paddings), then the group padded to a multiple of 2 x world size and split equally between the 4
ranks. The embedding's weight is tied to lm_head.weight (shared_params). DeepSpeed's
zero_to_fp32.get_fp32_state_dict_from_zero_checkpoint must give back every closed-form value.

    /work/venvs/torch/bin/python samples/deepspeed/make_aligned.py

Parameter p (in param_shapes' order), element i: p + 1 + i / 16; buffer 'scale': i / 8. The run's
aligned/latest names global_step1.
"""
import math
import os
import shutil
import sys
from collections import OrderedDict

import torch
import deepspeed
from deepspeed.checkpoint import constants as C
from deepspeed.runtime.zero.config import ZeroStageEnum
from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "aligned")
TAG = "global_step1"
WORLD = 4
ALIGN = 16 // math.gcd(16, 2)  # stage_1_and_2.py's param_alignment for bf16 parameters
GROUPS = [OrderedDict([("emb.weight", (3, 5)), ("ln.bias", (4,)), ("head.bias", (6,))]),
          OrderedDict([("fc.weight", (2, 7)), ("fc.bias", (6,))])]
SHARED = {"lm_head.weight": "emb.weight"}


def values():
    params, p = OrderedDict(), 0
    for group in GROUPS:
        for name, shape in group.items():
            n = math.prod(shape)
            params[name] = (p + 1 + torch.arange(n, dtype=torch.float64) / 16).float().reshape(shape)
            p += 1
    return params, (torch.arange(5, dtype=torch.float64) / 8).float()


def flatten(group, params):
    """The group's flat vector and its paddings, as stage_1_and_2.py builds them (round_robin_bit16_padding)."""
    pieces, paddings, offset = [], [], 0
    for j, name in enumerate(group):
        t = params[name].flatten()
        offset += t.numel()
        pad = 0 if j == len(group) - 1 else (-offset) % ALIGN
        pieces += [t, torch.zeros(pad)]
        paddings.append(pad)
        offset += pad
    flat = torch.cat(pieces)
    return torch.cat([flat, torch.zeros(-len(flat) % (2 * WORLD))]), paddings, -len(flat) % (2 * WORLD)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    folder = os.path.join(OUT, TAG)
    os.makedirs(folder)
    params, scale = values()
    module = OrderedDict((n, t.clone()) for n, t in params.items())
    module["lm_head.weight"] = module["emb.weight"]
    module["scale"] = scale.clone()
    torch.save({
        "module": module, C.BUFFER_NAMES: ["scale"],
        C.PARAM_SHAPES: [OrderedDict((n, torch.Size(s)) for n, s in g.items()) for g in GROUPS],
        C.FROZEN_PARAM_SHAPES: None, C.FROZEN_PARAM_FRAGMENTS: None, "shared_params": SHARED, "optimizer": None,
        "lr_scheduler": None, "sparse_tensor_module_names": set(), "skipped_steps": 0, "global_steps": 1,
        "global_samples": 1, "dp_world_size": WORLD, "mp_world_size": 1, C.DS_VERSION: deepspeed.__version__,
        "ds_config": {"train_batch_size": 4, "bf16": {"enabled": True},
                      "zero_optimization": {"stage": 2, "parameter_alignment": True}},
    }, os.path.join(folder, "mp_rank_00_model_states.pt"))
    flats = [flatten(g, params) for g in GROUPS]
    for r in range(WORLD):
        parts = [f[len(f) // WORLD * r:len(f) // WORLD * (r + 1)].clone() for f, _, _ in flats]
        optim = {C.ZERO_STAGE: ZeroStageEnum.gradients, C.PARTITION_COUNT: [WORLD] * len(GROUPS),
                 C.LOSS_SCALER: None, "dynamic_loss_scale": False, "overflow": False, C.CLIP_GRAD: 1.0,
                 C.BASE_OPTIMIZER_STATE: [], C.SINGLE_PARTITION_OF_FP32_GROUPS: parts,
                 C.GROUP_PADDINGS: [g if r == WORLD - 1 else 0 for _, _, g in flats],
                 C.PARAM_ALIGNMENT_PADDINGS: [p for _, p, _ in flats],
                 C.DS_VERSION: deepspeed.__version__}
        torch.save({C.OPTIMIZER_STATE_DICT: optim, "ds_config": {}, "ds_version": deepspeed.__version__},
                   os.path.join(folder, f"zero_pp_rank_{r}_mp_rank_00_optim_states.pt"))
    with open(os.path.join(OUT, "latest"), "w") as f:
        f.write(TAG)
    got = get_fp32_state_dict_from_zero_checkpoint(OUT, tag=TAG)
    assert list(got) == ["scale"] + list(params) + list(SHARED), list(got)
    for n, t in params.items():
        assert torch.equal(got[n], t), n
    assert torch.equal(got["lm_head.weight"], params["emb.weight"])
    assert torch.equal(got["scale"], scale)
    assert any(any(p) for _, p, _ in flats), "no padding to skip"
    print("paddings", [p for _, p, _ in flats], "torch", torch.__version__, "deepspeed", deepspeed.__version__,
          "python", sys.version.split()[0])


if __name__ == "__main__":
    main()
