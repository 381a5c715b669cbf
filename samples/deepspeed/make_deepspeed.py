"""Writes DeepSpeed ZeRO checkpoint samples as DeepSpeed lays them out, and proves it with DeepSpeed's own reader.

DeepSpeed's engine writes the samples in engine/ (make_engine.py); the files here are made with closed-form values
the way its ZeRO optimizers partition (stage_1_and_2.py: the group's params flattened, padded to a multiple of
2 x world size, split equally; stage3.py: each param padded to ceil(numel / world size) per rank), saved by
torch.save with DeepSpeed's own key constants and ZeroStageEnum, and then reconstructed by DeepSpeed's
zero_to_fp32.get_fp32_state_dict_from_zero_checkpoint, which must give back every closed-form value.

    /work/venvs/torch/bin/python samples/deepspeed/make_deepspeed.py

Checkpoint k (1, 2, 3) of a 2-rank run: parameter p, element i: k + p + i / 16; buffer 'scale': k + i / 8.
run/global_step1000 and run/global_step2000 are ZeRO stage 2, run/global_step3000 stage 3; run/latest names
global_step3000.
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
OUT = os.path.join(HERE, "run")
WORLD = 2
SHAPES = OrderedDict([("fc1.weight", (5, 3)), ("fc1.bias", (5,)), ("fc2.weight", (3, 5)), ("fc2.bias", (3,))])


def values(k):
    params = OrderedDict()
    for p, (name, shape) in enumerate(SHAPES.items()):
        n = math.prod(shape)
        params[name] = (k + p + torch.arange(n, dtype=torch.float64) / 16).float().reshape(shape)
    return params, (k + torch.arange(5, dtype=torch.float64) / 8).float()


def model_states(params, scale, k):
    module = OrderedDict((n, t.clone()) for n, t in params.items())
    module["scale"] = scale.clone()
    return {
        "module": module, C.BUFFER_NAMES: ["scale"], C.PARAM_SHAPES: [OrderedDict((n, torch.Size(s)) for n, s in
                                                                               SHAPES.items())],
        C.FROZEN_PARAM_SHAPES: None, C.FROZEN_PARAM_FRAGMENTS: None, "shared_params": {}, "optimizer": None,
        "lr_scheduler": None, "sparse_tensor_module_names": set(), "skipped_steps": 0, "global_steps": k,
        "global_samples": k, "dp_world_size": WORLD, "mp_world_size": 1, C.DS_VERSION: deepspeed.__version__,
        "ds_config": {"train_batch_size": 2, "zero_optimization": {"stage": 2}},
    }


def save_stage2(folder, params, scale, k):
    flat = torch.cat([t.flatten() for t in params.values()])
    align = 2 * WORLD
    padded = torch.cat([flat, torch.zeros(-len(flat) % align)])
    part = len(padded) // WORLD
    torch.save(model_states(params, scale, k), os.path.join(folder, "mp_rank_00_model_states.pt"))
    for r in range(WORLD):
        optim = {C.ZERO_STAGE: ZeroStageEnum.gradients, C.PARTITION_COUNT: WORLD, C.LOSS_SCALER: None,
                 "dynamic_loss_scale": False, "overflow": False, C.CLIP_GRAD: 1.0,
                 C.BASE_OPTIMIZER_STATE: [], C.SINGLE_PARTITION_OF_FP32_GROUPS: [padded[r * part:(r + 1) * part].clone()],
                 C.GROUP_PADDINGS: [len(padded) - len(flat) if r == WORLD - 1 else 0], C.DS_VERSION: deepspeed.__version__}
        torch.save({C.OPTIMIZER_STATE_DICT: optim, "ds_config": {}, "ds_version": deepspeed.__version__},
                   os.path.join(folder, f"zero_pp_rank_{r}_mp_rank_00_optim_states.pt"))


def save_stage3(folder, params, scale, k):
    slices = [[] for _ in range(WORLD)]
    for t in params.values():
        n = t.numel()
        pn = math.ceil(n / WORLD)
        padded = torch.cat([t.flatten(), torch.zeros(pn * WORLD - n)])
        for r in range(WORLD):
            slices[r].append(padded[r * pn:(r + 1) * pn])
    for r in range(WORLD):
        states = model_states(OrderedDict((n, torch.empty(0)) for n in params), scale, k)
        torch.save(states, os.path.join(folder, f"zero_pp_rank_{r}_mp_rank_00_model_states.pt"))
        optim = {C.ZERO_STAGE: ZeroStageEnum.weights, C.PARTITION_COUNT: WORLD, C.LOSS_SCALER: None,
                 "dynamic_loss_scale": False, "overflow": False, C.FP32_FLAT_GROUPS: [torch.cat(slices[r])],
                 C.DS_VERSION: deepspeed.__version__}
        torch.save({C.OPTIMIZER_STATE_DICT: optim, "ds_config": {}, "ds_version": deepspeed.__version__},
                   os.path.join(folder, f"zero_pp_rank_{r}_mp_rank_00_optim_states.pt"))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    for k, save in ((1, save_stage2), (2, save_stage2), (3, save_stage3)):
        folder = os.path.join(OUT, f"global_step{1000 * k}")
        os.makedirs(folder)
        params, scale = values(k)
        save(folder, params, scale, k)
        got = get_fp32_state_dict_from_zero_checkpoint(OUT, tag=f"global_step{1000 * k}")
        assert list(got) == ["scale"] + list(SHAPES), list(got)
        for n, t in params.items():
            assert torch.equal(got[n], t), n
        assert torch.equal(got["scale"], scale)
    with open(os.path.join(OUT, "latest"), "w") as f:
        f.write("global_step3000")
    print("torch", torch.__version__, "deepspeed", deepspeed.__version__, "python", sys.version.split()[0])


if __name__ == "__main__":
    main()
