#!/usr/bin/env python3
"""Times a merge (the plain mean, or --method with --base for the task methods) at -j1, -j2 and the default thread
count, interleaved, for one or more wavg binaries (an old and a new build side by side), and prints each one's median
wall time (min-max) and CPU time (user + system, from GNU time) over the rounds, with the load average before and
after. Wall-clock ratios on a shared machine move with everyone else's work; the CPU seconds show what idle threads
cost (a spinning OpenMP thread burns CPU while the main thread reads and writes).

    tests/bench/threads.py --wavg build/wavg [--wavg old/wavg] [--model 10M] [--inputs 4] [--rounds 5]
                           [--method 'dare-ties --density 0.5'] [--base] [--floor] [--threads -j1,-j2,default]

With --floor each round also times the one-read floor (`cat` of every input and the base, then a file of the
output's size written with dd and fsynced) and each row prints its median wall time over the floor's.

The inputs are bench_models.py's deterministic safetensors files, read once first so they sit in the page cache;
the environment's OMP_WAIT_POLICY is removed, so each binary runs with the policy it chooses itself.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_models  # noqa: E402


def run(argv, env):
    with tempfile.NamedTemporaryFile("r") as rep:
        subprocess.run(["/usr/bin/time", "-f", "%e %U %S", "-o", rep.name, *argv], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        wall, user, sys_ = (float(x) for x in rep.read().split()[-3:])
        return wall, user + sys_


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavg", action="append", required=True)
    ap.add_argument("--model", default="10M", choices=sorted(bench_models.MODELS))
    ap.add_argument("--inputs", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default="/tmp/wavg-bench-threads")
    ap.add_argument("--method", help="merge's --method and its options, one string (default: the mean)")
    ap.add_argument("--base", action="store_true", help="one more input, merged as --base (the task methods)")
    ap.add_argument("--floor", action="store_true", help="time the one-read floor beside them")
    ap.add_argument("--threads", default="-j1,-j2,default", help="comma list of -jN and default")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    paths = []
    for k in range(1, args.inputs + 1 + args.base):
        p = os.path.join(args.dir, f"{args.model}-{k}.safetensors")
        if not os.path.exists(p):
            bench_models.write_safetensors(p, args.model, k)
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
        paths.append(p)
    out = os.path.join(args.dir, "out.safetensors")
    method = ["--method", *args.method.split()] if args.method else []
    method += ["--base", paths.pop()] if args.base else []
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS")}
    cases = [(w, j) for w in args.wavg for j in args.threads.split(",")]
    read = paths + method[-1:] if args.base else paths
    mib = max(1, os.path.getsize(paths[0]) >> 20)
    floor = ["sh", "-c", f"cat {' '.join(read)} > /dev/null && "
             f"dd if=/dev/zero of={args.dir}/floor.out bs=1M count={mib} conv=fsync status=none"]
    if args.floor:
        cases.insert(0, ("floor", ""))
    times = {c: [] for c in cases}
    print("load before:", os.getloadavg())
    for _ in range(args.rounds):
        for w, j in cases:
            argv = [w, "merge", "-q", "--force", "--hash", "none", *method, *paths, "-o", out]
            argv += [j] if j != "default" else []
            argv = floor if w == "floor" else argv
            times[(w, j)].append(run(argv, env))
    print("load after:", os.getloadavg())
    print(f"{'binary':<28} {'threads':<8} {'wall s (min-max)':>18} {'CPU s':>7}  (medians of {args.rounds}; "
          f"{args.method or 'mean'}, {args.inputs} x {os.path.getsize(paths[0]) / 1e6:.0f} MB, page cache)")
    floor_wall = statistics.median(t[0] for t in times[("floor", "")]) if args.floor else None
    for w, j in cases:
        walls = [t[0] for t in times[(w, j)]]
        cpu = statistics.median(t[1] for t in times[(w, j)])
        ratio = f"  {statistics.median(walls) / floor_wall:.2f}x floor" if floor_wall else ""
        print(f"{w[-28:]:<28} {j:<8} {statistics.median(walls):>7.2f} ({min(walls):.2f}-{max(walls):.2f}) {cpu:>7.2f}"
              + ratio)


if __name__ == "__main__":
    main()
