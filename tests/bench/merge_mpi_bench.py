#!/usr/bin/python3
"""Times `mpirun -np K wavg merge` (a distributed merge) at K = 1..4 and measures the bytes each rank reads.

Writes --inputs float32 safetensors checkpoints of a GPT-like layout with one huge embedding (vocabulary 50,000 x
d 512, 102 MB, beside 9 blocks of d x 4d and 4d x d: about 150M bytes a checkpoint), merges them once without
mpirun (the reference bytes), then under `mpirun --oversubscribe -np K` for each K, checking every output is the
reference byte for byte. Each run starts cold: the inputs are evicted from the page cache first
(posix_fadvise DONTNEED on each input, which touches no other file), so every byte a rank maps comes from the
disk and is counted in its read_bytes (/proc/PID/io, reported through getrusage's ru_inblock of a small wrapper
that runs the rank). Prints per K the best of --repeat wall times, each rank's bytes read against the ideal
(the inputs' bytes / K), with --hash none (a rank reads only its share) and with the default xxh3 fingerprint
(input i is hashed whole by rank i mod K: a digest cannot be split), and the measured seconds per input byte.

    tests/bench/merge_mpi_bench.py --wavg build/wavg [--inputs 4] [--ranks 1,2,3,4] [--repeat 2] [--dir DIR]

On this 2-core VM K ranks share two cores and one disk, so the wall times show the cost of coordination and of
splitting, not a speed-up; bytes per rank are what each node of a cluster would read over its link.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from write_safetensors import save  # noqa: E402

D, BLOCKS, VOCAB = 512, 9, 50000
WRAPPER = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[2:]).returncode
rank = __import__("os").environ.get("OMPI_COMM_WORLD_RANK", "0")
with open(sys.argv[1] + "." + rank, "w") as f:
    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_inblock * 512))
sys.exit(code)
"""


def make_inputs(folder, n):
    paths = []
    for k in range(n):
        rng = np.random.default_rng(k)
        tensors = {"wte": rng.standard_normal((VOCAB, D), dtype=np.float32)}
        for b in range(BLOCKS):
            tensors[f"h{b}.fc"] = rng.standard_normal((D, 4 * D), dtype=np.float32)
            tensors[f"h{b}.proj"] = rng.standard_normal((4 * D, D), dtype=np.float32)
            tensors[f"h{b}.ln"] = rng.standard_normal(D, dtype=np.float32)
        path = os.path.join(folder, f"in{k}.safetensors")
        save(path, tensors)
        paths.append(path)
    return paths


def evict(paths):
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def run(cmd, env):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavg", required=True)
    ap.add_argument("--inputs", type=int, default=4)
    ap.add_argument("--ranks", default="1,2,3,4")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dir")
    args = ap.parse_args()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(dir=args.dir) as folder:
        inputs = make_inputs(folder, args.inputs)
        in_bytes = sum(os.path.getsize(p) for p in inputs)
        ref = os.path.join(folder, "ref.safetensors")
        out = os.path.join(folder, "out.safetensors")
        wrapper = os.path.join(folder, "wrap.py")
        with open(wrapper, "w") as f:
            f.write(WRAPPER)
        evict(inputs)
        t1 = run([args.wavg, "merge", *inputs, "-o", ref, "-q", "--hash", "none"], env)
        print(f"{args.inputs} inputs, {in_bytes / 1e6:.0f} MB in all; one process without mpirun, cold: {t1:.2f} s "
              f"({t1 / in_bytes * 1e9:.2f} ns per input byte)")
        print("| K | --hash | wall s (best of %d, cold) | bytes read per rank, MB | max / ideal |" % args.repeat)
        print("|---|---|---|---|---|")
        for k in [int(x) for x in args.ranks.split(",")]:
            for hash_algo in ["none", "xxh3"]:
                best, reads = None, None
                for _ in range(args.repeat):
                    evict(inputs)
                    if os.path.exists(out):
                        os.unlink(out)
                    stem = os.path.join(folder, "io")
                    t = run(["mpirun", "--oversubscribe", "-np", str(k), sys.executable, wrapper, stem, args.wavg,
                             "merge", *inputs, "-o", out, "-q", "--hash", hash_algo], env)
                    rank_reads = [int(open(f"{stem}.{r}").read()) for r in range(k)]
                    if best is None or t < best:
                        best, reads = t, rank_reads
                    if hash_algo == "none":
                        with open(out, "rb") as a, open(ref, "rb") as b:
                            assert a.read() == b.read(), f"K={k}: not the single-process bytes"
                ideal = in_bytes / k
                print(f"| {k} | {hash_algo} | {best:.2f} | {', '.join(f'{r / 1e6:.0f}' for r in reads)} "
                      f"| {max(reads) / ideal:.2f} |")


if __name__ == "__main__":
    main()
