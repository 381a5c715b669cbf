"""Writes DeepSpeed ZeRO checkpoints with DeepSpeed's own engine on the CPU: two ranks (gloo), torch.optim.Adam.

    /work/venvs/torch/bin/python samples/deepspeed/make_engine.py

engine/zero2/ (ZeRO stage 2, bf16: the module's parameters bf16, the fp32 master partitions and Adam's moments in
bf16_zero_pp_rank_R_mp_rank_00_optim_states.pt) and engine/zero3/ (ZeRO stage 3, fp32), each with global_step1/,
global_step2/ and `latest`, of a Linear(3, 5), scaled by a buffer `scale`, then Linear(5, 3). DeepSpeed's engine builds its shared-memory communication op with ninja at
start-up; on two cores that build takes minutes (a killed one leaves a lock behind, and the next start waits on it
for ever), so this script starts the engine without that op (gloo does the communication).
"""
import importlib
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
WORLD = 2


class Net(torch.nn.Module):
    """Linear(3, 5), scaled by a buffer, then Linear(5, 3)."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3, 5)
        self.fc2 = torch.nn.Linear(5, 3)
        self.register_buffer("scale", torch.arange(1, 6, dtype=torch.float32) / 4)

    def forward(self, x):
        h = self.fc1(x.to(self.fc1.weight.dtype))
        return self.fc2(h * self.scale.to(h.dtype))


def start_rank(rank, port):
    os.environ.update(DS_ACCELERATOR="cpu", RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(WORLD),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    import deepspeed
    importlib.import_module("deepspeed.comm.torch").build_shm_op = lambda: None
    deepspeed.init_distributed(dist_backend="gloo")
    return deepspeed


def engine(deepspeed, stage, bf16, lr=0.05):
    torch.manual_seed(7)
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    cfg = {"train_batch_size": 2 * WORLD, "train_micro_batch_size_per_gpu": 2,
           "zero_optimization": {"stage": stage}, "zero_allow_untested_optimizer": True,
           "bf16": {"enabled": bf16}}
    eng, _, _, _ = deepspeed.initialize(model=model, optimizer=opt, config=cfg)
    return eng


def train_step(eng, rank, step, dtype):
    g = torch.Generator().manual_seed(100 * step + rank)
    x = torch.randn(2, 3, generator=g).to(dtype)
    loss = (eng(x).float() ** 2).sum()
    eng.backward(loss)
    eng.step()


def make(rank, port, stage, bf16, out):
    deepspeed = start_rank(rank, port)
    eng = engine(deepspeed, stage, bf16)
    for step in (1, 2):
        train_step(eng, rank, step, torch.bfloat16 if bf16 else torch.float32)
        eng.save_checkpoint(out, tag=f"global_step{step}")


def main():
    from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint
    import deepspeed
    for stage, bf16, port in ((2, True, 29611), (3, False, 29612)):
        out = os.path.join(HERE, "engine", f"zero{stage}")
        shutil.rmtree(out, ignore_errors=True)
        torch.multiprocessing.spawn(make, args=(port, stage, bf16, out), nprocs=WORLD)
        for name in ("zero_to_fp32.py", "zero_to_torch.py"):  # DeepSpeed's copies of its own scripts
            if os.path.exists(os.path.join(out, name)):
                os.remove(os.path.join(out, name))
        for tag in ("global_step1", "global_step2"):
            got = get_fp32_state_dict_from_zero_checkpoint(out, tag=tag)
            assert list(got) == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"], list(got)
    print("torch", torch.__version__, "deepspeed", deepspeed.__version__, "python", sys.version.split()[0])


if __name__ == "__main__":
    main()
