"""DeepSpeed's engine resumes from a folder wavg wrote: two ranks on the CPU (gloo) load it and take one step.

    engine_resume.py SAMPLES_ENGINE_DIR STAGE OUTPUT_PARENT TAG

The engine is made as samples/deepspeed/make_engine.py made the samples (same model, optimizer and config), loads
OUTPUT_PARENT/TAG with load_checkpoint (module, optimizer and fp32 master weights), and each rank's fp32 master
partition and Adam moments must then equal what its optim file holds; a training step must then run.
"""
import os
import sys

import torch

STAGE = int(sys.argv[2])
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
import make_engine  # noqa: E402  (samples/deepspeed/make_engine.py)


def rank_main(rank, port, parent, tag):
    deepspeed = make_engine.start_rank(rank, port)
    bf16 = STAGE == 2
    eng = make_engine.engine(deepspeed, STAGE, bf16)
    path, _ = eng.load_checkpoint(parent, tag=tag)
    assert path is not None, "load_checkpoint found nothing"
    opt = eng.optimizer
    name = ("bf16_" if bf16 else "") + f"zero_pp_rank_{rank}_mp_rank_00_optim_states.pt"
    saved = torch.load(os.path.join(parent, tag, name), map_location="cpu", weights_only=False)["optimizer_state_dict"]
    live = opt.state_dict()  # DeepSpeed's own view of its loaded state, as it would save it
    key = "single_partition_of_fp32_groups" if STAGE <= 2 else "fp32_flat_groups"
    for mine, theirs in zip(live[key], saved[key]):
        assert torch.equal(mine, theirs), "fp32 master partition"
    inner = "base_optimizer_state" if STAGE <= 2 else "optimizer_state_dict"
    for g, s in saved[inner]["state"].items():
        for k, v in s.items():
            assert torch.equal(live[inner]["state"][g][k], v), f"optimizer state {k} of group {g}"
    make_engine.train_step(eng, rank, 3, torch.bfloat16 if bf16 else torch.float32)


if __name__ == "__main__":
    torch.multiprocessing.spawn(rank_main, args=(29640 + STAGE, sys.argv[3], sys.argv[4]), nprocs=make_engine.WORLD)
    print("ok")
