"""Benchmark (not a test): N DCP checkpoints of a model of P million float32 parameters written by R ranks
(torch.distributed.checkpoint on gloo, every weight a DTensor sharded row-wise), averaged by wavg (DCP folder
output, and safetensors) beside the cat floor (reading every input once) and beside consolidate-then-average in
torch (dcp_to_torch_save per checkpoint, then load, mean, save). Prints seconds and peak RSS (MiB) per row.

    /work/venvs/torch/bin/python tests/bench/dcp_bench.py WAVG WORKDIR [N R P]
"""
import os
import resource
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp

WAVG, WORK = sys.argv[1], sys.argv[2]
N, RANKS, MILLIONS = (int(x) for x in (sys.argv[3:] or ["8", "4", "64"]))
ROWS, COLS = 4096, 2048  # one weight: 8 Mi parameters


def write(rank, folder, k):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(29600 + k))
    dist.init_process_group("gloo", rank=rank, world_size=RANKS)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    mesh = init_device_mesh("cpu", (RANKS,))
    g = torch.Generator().manual_seed(k)
    sd = {"model": {f"layer{i}.weight": distribute_tensor(torch.randn(ROWS, COLS, generator=g), mesh, [Shard(0)])
                    for i in range(MILLIONS * 2**20 // (ROWS * COLS))}}
    dcp.save(sd, checkpoint_id=folder)
    dist.destroy_process_group()


def timed(cmd):
    t = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - t, int(out.stderr.strip().splitlines()[-1]) / 1024


def consolidate_then_average(folders):
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
    acc = None
    for i, f in enumerate(folders):
        dcp_to_torch_save(f, os.path.join(WORK, "one.pt"))
        sd = torch.load(os.path.join(WORK, "one.pt"), weights_only=True)["model"]
        acc = {k: v.double() for k, v in sd.items()} if acc is None else {k: acc[k] + v for k, v in sd.items()}
    torch.save({k: (v / len(folders)).float() for k, v in acc.items()}, os.path.join(WORK, "torch_avg.pt"))


def main():
    os.makedirs(WORK, exist_ok=True)
    folders = [os.path.join(WORK, f"step-{k}") for k in range(N)]
    for k, f in enumerate(folders):
        if not os.path.exists(os.path.join(f, ".metadata")):
            mp.spawn(write, args=(f, k), nprocs=RANKS)
    files = [os.path.join(f, x) for f in folders for x in sorted(os.listdir(f))]
    size = sum(os.path.getsize(x) for x in files) / 2**20
    subprocess.run(["cat"] + files, stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    rows = [("cat floor", ["sh", "-c", 'cat "$@" > /dev/null', "cat"] + files)]
    for out in ("avg_dcp/", "avg.safetensors"):
        subprocess.run(["rm", "-rf", os.path.join(WORK, out)])
        rows.append((f"wavg merge -o {out}", [WAVG, "merge", "-q", "--no-hash", *folders, "-o", os.path.join(WORK, out)]))
    print(f"{N} checkpoints x {RANKS} ranks, {MILLIONS} Mi float32 parameters each, {size:.0f} MiB in all")
    for name, cmd in rows:
        s, rss = timed(cmd)
        print(f"{name:36s} {s:8.2f} s {rss:8.0f} MiB")
    t = time.perf_counter()
    consolidate_then_average(folders)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{'torch consolidate-then-average':36s} {time.perf_counter() - t:8.2f} s {peak:8.0f} MiB (this process)")


if __name__ == "__main__":
    main()
