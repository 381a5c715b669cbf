#!/usr/bin/env python3
"""Counts the instructions `wavg merge` executes, under valgrind's callgrind, for the kernels issue 30 tunes: the
plain mean at -j1 and -j2 (what idle OpenMP threads cost), the median and trimmed mean at N = 4 and 16, and the
fingerprint (--hash xxh3 against --hash none). Instruction counts do not depend on the machine's load, which on
a shared 2-core VM moves wall-clock ratios by 20 % or more; the benchmark prints, beside each count, its ratio to
the plain mean of the same inputs at -j1 and what it reads and writes.

    tests/bench/instructions.py --wavg build/wavg [--model 10M] [--dir DIR]

The inputs are bench_models.py's deterministic safetensors files (float32; 10M: 13.8M values, 55 MB each).
callgrind runs threads one at a time, so a spinning thread's loop is counted as it executes: -j2's extra count
over -j1 is what the second thread costs in CPU, not in wall time. valgrind 3.19 has no AVX-512: the kernels run
their AVX2 versions there.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_models  # noqa: E402


def instructions(argv, env_extra=None):
    """Returns the instructions callgrind counted for argv (all threads), or None when it fails."""
    with tempfile.NamedTemporaryFile("r", suffix=".callgrind") as out:
        # Set here, so that wavg does not start itself again to set it (valgrind would not follow).
        env = dict(os.environ, OMP_WAIT_POLICY="passive", **(env_extra or {}))
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}", *argv],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        if proc.returncode != 0:
            print(f"  failed: {' '.join(argv)}: {proc.stderr.decode(errors='replace')[-400:]}", file=sys.stderr)
            return None
        m = re.search(r"^summary:\s*(\d+)", out.read(), re.M)
        return int(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavg", required=True)
    ap.add_argument("--model", default="10M", choices=sorted(bench_models.MODELS))
    ap.add_argument("--dir", help="where to write the inputs (default: a temporary folder)")
    ap.add_argument("--only", default="", help="comma-separated row names to run (default: all)")
    args = ap.parse_args()
    work = args.dir or tempfile.mkdtemp(prefix="wavg-instr-")
    paths = []
    for k in range(1, 17):
        p = os.path.join(work, f"{args.model}-{k}.safetensors")
        if not os.path.exists(p):
            bench_models.write_safetensors(p, args.model, k)
        paths.append(p)
    size = os.path.getsize(paths[0])
    out = os.path.join(work, "out.safetensors")
    four, sixteen = paths[:4], paths

    def merge(inputs, *opts):
        return [args.wavg, "merge", "-q", "--force", *inputs, "-o", out, *opts]

    rows = [
        ("mean -j1", merge(four, "-j1", "--hash", "none"), 4),
        ("mean -j2", merge(four, "-j2", "--hash", "none"), 4),
        ("mean -j1, xxh3", merge(four, "-j1"), 4),
        ("median N=4 -j1", merge(four, "-j1", "--hash", "none", "--method", "median"), 4),
        ("trimmed N=4 -j1", merge(four, "-j1", "--hash", "none", "--method", "trimmed-mean", "--trim", "0.25"), 4),
        ("mean N=16 -j1", merge(sixteen, "-j1", "--hash", "none"), 16),
        ("median N=16 -j1", merge(sixteen, "-j1", "--hash", "none", "--method", "median"), 16),
        ("trimmed N=16 -j1", merge(sixteen, "-j1", "--hash", "none", "--method", "trimmed-mean", "--trim", "0.25"), 16),
    ]
    only = set(filter(None, args.only.split(",")))
    base = {}
    print(f"{'what':<20} {'instructions':>15} {'x mean':>7}  reads, writes")
    for name, argv, n in rows:
        if only and name not in only:
            continue
        count = instructions(argv)
        if count is None:
            print(f"{name:<20} {'n/a':>15}")
            continue
        if name.startswith("mean"):
            base.setdefault(n, count)
        ratio = f"{count / base[n]:.2f}" if n in base else ""
        print(f"{name:<20} {count:>15,} {ratio:>7}  {n} x {size / 1e6:.0f} MB, {size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
