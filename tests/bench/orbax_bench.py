"""Benchmark (not a test): N Orbax checkpoints of P MiB of float32 parameters each (random values, written by
orbax-checkpoint's StandardCheckpointer: OCDBT, zarr v2 chunks zstd-compressed at level 1, Orbax's defaults),
averaged by wavg into an Orbax folder, beside the cat floor (every input file read once). The decompression cost is
stated apart: the same inputs re-written uncompressed by wavg (its Orbax output stores chunks raw) are merged too,
beside their own cat floor; the difference between the two merges is what zstd costs. Each row runs REPEAT times
with the page cache warm and prints the best and median seconds, the best's ratio to its cat floor, and the least
CPU seconds (user + system) and peak RSS (GNU time).

    VENV/bin/python tests/bench/orbax_bench.py WAVG WORKDIR [N P [REPEAT]]

The issue's row is N = 4, P = 1024 (4 x 1 GiB): 8 GiB of inputs and two 1 GiB outputs on disk, and more than
10 GiB of free memory for the page cache to stay warm. Runnable here at N = 4, P = 64.
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp

MIB_PER_ARRAY = 16  # one array: 4 Mi float32 parameters


def write(folder, k, mib):
    rng = np.random.default_rng(k)
    n = mib // MIB_PER_ARRAY
    tree = {"params": {f"layer{i}": {"kernel": jnp.asarray(rng.standard_normal((2048, 2048), dtype=np.float32))}
                       for i in range(n)}}
    c = ocp.StandardCheckpointer()
    c.save(folder, tree)
    c.wait_until_finished()


def files(folder):
    return [os.path.join(r, f) for r, _, fs in os.walk(folder) for f in fs]


def measure(cmd):
    report = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"orbax_bench_time.{os.getpid()}")
    t = time.perf_counter()
    subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", report] + cmd, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - t
    user, system, rss = open(report).read().split()[-3:]
    return seconds, float(user) + float(system), int(rss) / 1024


def row(name, cmd, repeat, floor=None, before=None):
    if before:
        before()
    runs = []
    for _ in range(repeat):
        if before:
            before()
        runs.append(measure(cmd))
    best = min(r[0] for r in runs)
    ratio = f"{best / floor:.2f}x" if floor else "1.00x"
    print(f"| {name} | {best:.2f} | {statistics.median(r[0] for r in runs):.2f} | {ratio} | "
          f"{min(r[1] for r in runs):.2f} | {max(r[2] for r in runs):,.0f} | {os.getloadavg()[0]:.1f} |", flush=True)
    return best


def main():
    args = sys.argv[1:]
    wavg, work = args[0], args[1]
    n = int(args[2]) if len(args) > 2 else 4
    mib = int(args[3]) if len(args) > 3 else 64
    repeat = int(args[4]) if len(args) > 4 else 3
    os.makedirs(work, exist_ok=True)
    zstd_in = [os.path.join(work, f"zstd_{k}") for k in range(n)]
    raw_in = [os.path.join(work, f"raw_{k}") for k in range(n)]
    for k, folder in enumerate(zstd_in):
        if not os.path.exists(os.path.join(folder, "_METADATA")):
            shutil.rmtree(folder, ignore_errors=True)
            write(folder, k, mib)
    for src, dst in zip(zstd_in, raw_in):
        if not os.path.exists(os.path.join(dst, "_METADATA")):
            subprocess.run([wavg, "convert", "-q", src, "-o", dst + "/"], check=True)
    size = sum(os.path.getsize(f) for d in zstd_in for f in files(d))
    print(f"{n} checkpoints of {mib} MiB float32, {size / 2**20:,.0f} MiB on disk (zstd), "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    print("| row | best s | median s | / floor | CPU s | peak RSS MiB | load |")
    print("|---|---|---|---|---|---|---|")
    out = os.path.join(work, "avg")
    clear = lambda: shutil.rmtree(out, ignore_errors=True)  # noqa: E731
    cat = ["sh", "-c", 'cat "$@" > /dev/null', "cat"]
    floor = row("cat floor, zstd inputs", cat + [f for d in zstd_in for f in files(d)], repeat)
    row("wavg merge zstd inputs -o avg/", [wavg, "merge", "-q"] + zstd_in + ["-o", out + "/"], repeat, floor, clear)
    raw_floor = row("cat floor, raw inputs", cat + [f for d in raw_in for f in files(d)], repeat)
    row("wavg merge raw inputs -o avg/", [wavg, "merge", "-q"] + raw_in + ["-o", out + "/"], repeat, raw_floor, clear)
    clear()


if __name__ == "__main__":
    main()
