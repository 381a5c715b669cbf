"""Benchmark (not a test): N DCP checkpoints of a model of P Mi float32 parameters written by R ranks
(torch.distributed.checkpoint on gloo, every weight a DTensor sharded row-wise), averaged by wavg (DCP folder
output, and safetensors) beside the cat floor (reading every input once) and beside consolidate-then-average in
torch (dcp_to_torch_save per checkpoint, then load, float64 sum, save; in a process of its own). Each row runs
REPEAT times with the page cache warm; it prints the best and the median seconds, the best's ratio to the cat
floor's best, the least CPU time (user + system; on a loaded machine the honest measure), the peak RSS (getrusage
of the process: the resident pages of mapped inputs count) and the peak anonymous RSS (RssAnon in
/proc/PID/status, sampled every 10 ms: the memory the process itself allocated), and the load average around each
row.

    /work/venvs/torch/bin/python tests/bench/dcp_bench.py WAVG WORKDIR [N R P [REPEAT]] [--no-torch]

The issue's row is N = 8, R = 4, P = 1024 (1 Gi parameters, 4 GiB a checkpoint): it needs 32 GiB of disk for the
inputs and 4 GiB for each output (checked before anything is written), more than 36 GiB of free memory for the page
cache to stay warm (else every row, the cat floor included, measures the disk), and for the torch row about 8 times
a checkpoint's size in memory (1.96 GiB peak at P = 64: the float64 sums, the consolidated checkpoint, its loaded
copy), 32 GiB at P = 1024: --no-torch leaves that row out. Each checkpoint is written by R processes holding P/R Mi
parameters each (and one 32 MiB weight whole at a time).
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp

ROWS, COLS = 4096, 2048  # one weight: 8 Mi parameters


def write(rank, folder, k, ranks, millions):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(29600 + k))
    dist.init_process_group("gloo", rank=rank, world_size=ranks)
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import Shard, distribute_tensor
    mesh = init_device_mesh("cpu", (ranks,))
    g = torch.Generator().manual_seed(k)
    sd = {"model": {f"layer{i}.weight": distribute_tensor(torch.randn(ROWS, COLS, generator=g), mesh, [Shard(0)])
                    for i in range(millions * 2**20 // (ROWS * COLS))}}
    dcp.save(sd, checkpoint_id=folder)
    dist.destroy_process_group()


def measure(cmd):
    """Runs cmd; returns seconds, peak anonymous RSS (MiB), CPU seconds (user + system, its children's too) and peak
    RSS (MiB, from GNU time where the machine has it; None where not: getrusage's maxrss of a child forked from
    this interpreter would count the interpreter's own pages, which the child holds until its exec)."""
    report = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"dcp_bench_time.{os.getpid()}")
    gnu_time = os.path.exists("/usr/bin/time")
    t = time.perf_counter()
    p = subprocess.Popen((["/usr/bin/time", "-f", "%M", "-o", report] if gnu_time else []) + cmd,
                         stdout=subprocess.DEVNULL)
    anon = 0
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        try:  # the command itself, or the child GNU time started
            for child in [p.pid] + [int(c) for c in open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()]:
                with open(f"/proc/{child}/status") as f:
                    for line in f:
                        if line.startswith("RssAnon:"):
                            anon = max(anon, int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.01)
    seconds = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.returncode}")
    rss = None
    if gnu_time:
        with open(report) as f:
            rss = int(f.read().split()[-1]) / 1024
        os.unlink(report)
    return seconds, anon / 1024, usage.ru_utime + usage.ru_stime, rss


def consolidate_then_average(work, folders):
    from torch.distributed.checkpoint.format_utils import dcp_to_torch_save
    acc = None
    for f in folders:
        dcp_to_torch_save(f, os.path.join(work, "one.pt"))
        sd = torch.load(os.path.join(work, "one.pt"), weights_only=True)["model"]
        acc = {k: v.double() for k, v in sd.items()} if acc is None else {k: acc[k] + v for k, v in sd.items()}
    torch.save({k: (v / len(folders)).float() for k, v in acc.items()}, os.path.join(work, "torch_avg.pt"))


def main():
    if sys.argv[1] == "--consolidate":
        consolidate_then_average(sys.argv[2], sys.argv[3:])
        return
    args = [a for a in sys.argv[1:] if a != "--no-torch"]
    torch_row = len(args) == len(sys.argv) - 1
    wavg, work = args[0], args[1]
    n, ranks, millions, repeat = (int(x) for x in (args[2:] + ["8", "4", "64", "3"][len(args[2:]):]))
    if millions * 2**20 % (ROWS * COLS):
        raise SystemExit(f"P must be a multiple of {ROWS * COLS // 2**20} (Mi parameters per weight)")
    os.makedirs(work, exist_ok=True)
    folders = [os.path.join(work, f"step-{k}") for k in range(n)]
    missing = sum(not os.path.exists(os.path.join(f, ".metadata")) for f in folders)
    need = (missing * millions * 4 + 2 * millions * 4 * (2 if torch_row else 1)) * 2**20
    if shutil.disk_usage(work).free < need:
        free = shutil.disk_usage(work).free
        raise SystemExit(f"{work}: {need / 2**30:.1f} GiB of free disk needed, {free / 2**30:.1f} GiB free")
    for k, f in enumerate(folders):
        if not os.path.exists(os.path.join(f, ".metadata")):
            t = time.perf_counter()
            mp.spawn(write, args=(f, k, ranks, millions), nprocs=ranks)
            print(f"wrote {f} in {time.perf_counter() - t:.1f} s", flush=True)
    files = [os.path.join(f, x) for f in folders for x in sorted(os.listdir(f))]
    size = sum(os.path.getsize(x) for x in files) / 2**20
    subprocess.run(["cat"] + files, stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    rows = [("cat floor", ["sh", "-c", 'cat "$@" > /dev/null', "cat"] + files)]
    for out in ("avg_dcp/", "avg.safetensors"):
        target = os.path.join(work, out)
        rows.append((f"wavg merge -o {out}", ["sh", "-c", f'rm -rf "{target}" && exec "$@"', "wavg", wavg, "merge",
                                              "-q", "--no-hash", *folders, "-o", target]))
    if torch_row:
        rows.append(("torch consolidate-then-average", [sys.executable, __file__, "--consolidate", work, *folders]))
    print(f"{n} checkpoints x {ranks} ranks, {millions} Mi float32 parameters each, {size:.0f} MiB in all; "
          f"{os.cpu_count()} CPUs; best and median of {repeat}")
    floor = None
    for name, cmd in rows:
        load = os.getloadavg()[0]
        runs = [measure(cmd) for _ in range(1 if name.startswith("torch") else repeat)]
        best = min(r[0] for r in runs)
        floor = floor or best
        rss = max(r[3] for r in runs) if runs[0][3] is not None else float("nan")
        cpu = min(r[2] for r in runs)
        print(f"{name:32s} {best:7.2f} s (median {statistics.median(r[0] for r in runs):7.2f}) "
              f"{best / floor:5.2f}x floor  CPU {cpu:6.2f} s  peak RSS {rss:6.0f} MiB  "
              f"anon {max(r[1] for r in runs):6.0f} MiB  "
              f"load {load:.1f}-{os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
