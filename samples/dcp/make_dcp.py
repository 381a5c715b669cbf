"""Writes the PyTorch Distributed Checkpoint samples with torch.distributed.checkpoint itself (see README.md).

Run from the repository root with a torch >= 2.4 from PyPI (not Debian's 1.13, which has no DCP):
    python samples/dcp/make_dcp.py
Every value is a closed-form formula exact in float32, so tests compute the merge without torch:
    checkpoint k (1, 2, 3): parameter or moment number p, element i (row-major):
        model weights       k + p + i / 16
        exp_avg             -k / 2 + p + i / 32
        exp_avg_sq          k / 4 + p + i / 64
        step                100 k (a float32 scalar tensor, as Adam keeps it)
        lr (param_groups)   0.001 k (a Python float: a torch.save'd bytes value)
    buffer 'scale' (1-D, 5)  k + i / 8
run/step-100 and run/step-200 (k = 1, 2) are saved by one process (no_dist=True); run/step-300 (k = 3) by two
ranks on gloo (torch.multiprocessing), every tensor a DTensor: the (5, 3) weight row-wise over uneven rows (3 + 2),
the (4, 5) one column-wise (3 + 2 columns), its moments likewise, the biases and buffer replicated.
"""
import os
import shutil
import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "run")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3, 5)
        self.fc2 = torch.nn.Linear(5, 4)
        self.register_buffer("scale", torch.zeros(5))

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)) * self.scale)


def formula(shape, k, p, base, step):
    n = 1
    for d in shape:
        n *= d
    return (base(k) + p + torch.arange(n, dtype=torch.float64) * step).to(torch.float32).reshape(shape)


def model_and_optimizer(k):
    """A Net and its Adam, both holding checkpoint k's values."""
    torch.manual_seed(0)
    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=0.001 * k)
    net(torch.ones(2, 3)).sum().backward()
    opt.step()
    with torch.no_grad():
        for p, (name, t) in enumerate(net.named_parameters()):
            t.copy_(formula(t.shape, k, p, float, 1 / 16))
            st = opt.state[t]
            st["exp_avg"].copy_(formula(t.shape, k, p, lambda k: -k / 2, 1 / 32))
            st["exp_avg_sq"].copy_(formula(t.shape, k, p, lambda k: k / 4, 1 / 64))
            st["step"].fill_(100 * k)
        net.scale.copy_(formula((5,), k, 0, float, 1 / 8))
    return net, opt


def state_dict(net, opt):
    return {"model": net.state_dict(), "optim": opt.state_dict()}


def two_ranks(rank, path):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517")
    dist.init_process_group("gloo", rank=rank, world_size=2)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Replicate, Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (2,))
    net, opt = model_and_optimizer(3)
    placement = {"fc1.weight": Shard(0), "fc2.weight": Shard(1)}
    names = [n for n, _ in net.named_parameters()]

    def shard(name, t):
        return distribute_tensor(t, mesh, [placement.get(name, Replicate())])

    sd = state_dict(net, opt)
    sd["model"] = {n: shard(n, t) for n, t in sd["model"].items()}
    for i, st in sd["optim"]["state"].items():
        for key in ("exp_avg", "exp_avg_sq"):
            st[key] = shard(names[i], st[key])
    dcp.save(sd, checkpoint_id=path)
    dist.barrier()
    dist.destroy_process_group()


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for k in (1, 2):
        dcp.save(state_dict(*model_and_optimizer(k)), checkpoint_id=os.path.join(OUT, f"step-{100 * k}"), no_dist=True)
    mp.spawn(two_ranks, args=(os.path.join(OUT, "step-300"),), nprocs=2)
    files = sorted(os.listdir(os.path.join(OUT, "step-300")))
    assert files == [".metadata", "__0_0.distcp", "__1_0.distcp"], files
    print("torch", torch.__version__, "python", sys.version.split()[0])


if __name__ == "__main__":
    main()
