#!/usr/bin/python3
"""Times `wavg allreduce` under mpirun, --algorithm reduce-scatter against gather, on one machine.

Writes K float32 checkpoints of a GPT-like layout (d=512, 9 blocks, vocabulary 12000: 58 tensors, 25.6M values,
102 MB each; rank k's seeded with k), checks that both algorithms write the bytes numpy's ordered mean gives (and
so `wavg merge`'s), and prints, per algorithm, the best of --repeat wall times and the per-rank --stats: bytes sent
as a multiple of the model, messages, and seconds in communication and arithmetic (averaged over ranks).

    tests/bench/mpi_bench.py --wavg build/wavg --ranks 8 --ranks 3 [--repeat 3] [--dir DIR]

Under `mpirun --oversubscribe` on a machine with fewer cores than ranks, ranks share cores and "communication"
is shared-memory copies plus waiting for a descheduled peer, so the seconds measure this machine, not a network;
the byte counts are what a network would carry.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time

import h5py
import numpy as np

D, BLOCKS, VOCAB = 512, 9, 12000


def layout():
    out = [("wte", (VOCAB, D)), ("wpe", (1024, D))]
    for b in range(BLOCKS):
        out += [(f"h{b}/attn/w", (D, 3 * D)), (f"h{b}/attn/b", (3 * D,)), (f"h{b}/proj/w", (D, D)),
                (f"h{b}/proj/b", (D,)), (f"h{b}/fc/w", (D, 4 * D)), (f"h{b}/fc/b", (4 * D,))]
    return out + [("ln_f/w", (D,)), ("ln_f/b", (D,))]


def write_inputs(directory, ranks):
    for k in range(ranks):
        path = os.path.join(directory, f"n{k}.h5")
        if os.path.exists(path):
            continue
        rng = np.random.default_rng(k)
        with h5py.File(path, "w") as f:
            for name, shape in layout():
                f[name] = rng.standard_normal(shape, dtype=np.float32)


def check(directory, ranks, out):
    with h5py.File(out, "r") as o:
        files = [h5py.File(os.path.join(directory, f"n{k}.h5"), "r") for k in range(ranks)]
        for name, _ in layout():
            acc = files[0][name][()].astype(np.float64)
            for f in files[1:]:
                acc = acc + f[name][()]
            assert o[name][()].tobytes() == (acc / ranks).astype(np.float32).tobytes(), name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavg", default="build/wavg")
    ap.add_argument("--ranks", type=int, action="append")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir")
    args = ap.parse_args()
    # One OpenMP thread per rank unless told otherwise: K ranks of all-core thread teams on fewer cores spin
    # against each other and the arithmetic's seconds would measure that.
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("OMP_NUM_THREADS", "1")
    directory = args.dir or tempfile.mkdtemp(prefix="wavg-mpi-bench-")
    model = 4 * sum(int(np.prod(s)) for _, s in layout())
    print(f"model: {model / 4e6:.1f}M float32 values, {model / 1e6:.1f} MB; {os.cpu_count()} cores, "
          f"OMP_NUM_THREADS={env['OMP_NUM_THREADS']}")
    print("| K | algorithm | wall s (best) | sent / model (max rank) | messages | comm s | arithmetic s (per input "
          "byte) |")
    print("|---|---|---|---|---|---|---|")
    for ranks in args.ranks or [8]:
        write_inputs(directory, ranks)
        for algorithm in ["gather", "reduce-scatter"]:
            out, stats = os.path.join(directory, "avg.h5"), os.path.join(directory, "stats.json")
            best, best_stats = None, None
            for _ in range(args.repeat):
                cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), args.wavg, "allreduce",
                       os.path.join(directory, "n{rank}.h5"), "-o", out, "--force", "-q",
                       "--algorithm", algorithm, "--stats", stats]
                start = time.perf_counter()
                subprocess.run(cmd, check=True, env=env)
                seconds = time.perf_counter() - start
                if best is None or seconds < best:
                    best, best_stats = seconds, json.load(open(stats))
            check(directory, ranks, out)
            per = best_stats["per_rank"]
            sent = max(r["bytes_sent"] for r in per) / model
            comm = sum(r["comm_seconds"] for r in per) / len(per)
            arith = sum(r["compute_seconds"] for r in per) / len(per)
            summed = model * (ranks if algorithm == "gather" else 1)  # input bytes each rank's sum reads
            print(f"| {ranks} | {algorithm} | {best:.2f} | {sent:.3f} (2(K-1)/K = {2 * (ranks - 1) / ranks:.3f}) | "
                  f"{per[0]['messages']} | {comm:.2f} | {arith:.2f} ({arith / summed * 1e9:.2f} ns/byte) |")


if __name__ == "__main__":
    main()
