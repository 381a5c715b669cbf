#!/usr/bin/python3
"""The paper model of a distributed merge (`mpirun -np K wavg merge`) of N checkpoints of S bytes each, from the
per-byte cost measured by tests/bench/merge_mpi_bench.py.

Each of K ranks (one per node) reads N S / K input bytes over its node's link of L bytes/s, computes them at c
seconds per input byte (the merge's arithmetic, measured from the page cache), and writes S / K output bytes
(the link is full duplex: reads and writes overlap, as do reading and computing: the engine prefetches the next
block). A fingerprint (the default --hash xxh3) hashes every input whole, one thread per input at h seconds
per byte beside the merge. One process (K = 1) hashes the pages the merge has just read, so it adds no reads;
with K > 1 input i is hashed by rank i mod K, which reads it whole again: the busiest rank reads
H = ceil(N / K) S more bytes (--hash none: H = 0). The shared file system's aggregate bandwidth F bounds everything:
the bytes that cross it. Per rank:

    T = max( (N S / K + H) / L,  N S c / K,  S h (when hashing),  S / K / L,  bytes / F )

    tests/bench/merge_mpi_model.py --ns-per-byte 0.4 [--inputs 8] [--size-gb 800] [--hash-gbps 10] [--fs-gbps 1000]
"""

import argparse
import math


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ns-per-byte", type=float, required=True, help="measured merge cost per input byte")
    ap.add_argument("--inputs", type=int, default=8)
    ap.add_argument("--size-gb", type=float, default=800.0, help="one checkpoint (400B parameters in bfloat16)")
    ap.add_argument("--hash-gbps", type=float, default=10.0, help="XXH3-128 on one core, GB/s")
    ap.add_argument("--fs-gbps", type=float, default=1000.0, help="the file system's aggregate bandwidth, GB/s")
    args = ap.parse_args()
    n, s = args.inputs, args.size_gb * 1e9
    c, h, fs = args.ns_per_byte * 1e-9, 1 / (args.hash_gbps * 1e9), args.fs_gbps * 1e9
    print(f"{n} checkpoints of {args.size_gb:.0f} GB ({n * s / 1e12:.1f} TB in), merge {args.ns_per_byte} ns per "
          f"input byte, hash {args.hash_gbps} GB/s, file system {args.fs_gbps:.0f} GB/s in all. Minutes:")
    print("| K | link GB/s | --hash none | --hash xxh3 (default) |")
    print("|---|---|---|---|")
    for k in [1, 8, 32, 64, 256]:
        for link_gbps in [2.0, 5.0]:
            link = link_gbps * 1e9
            row = []
            for hashing in [False, True]:
                hashed = math.ceil(n / k) * s if hashing and k > 1 else 0.0  # the busiest rank's extra reads
                crossing = (n + 1) * s + (n * s if hashing and k > 1 else 0.0)
                t = max((n * s / k + hashed) / link, n * s * c / k, s * h if hashing else 0.0, s / k / link,
                        crossing / fs)
                row.append(f"{t / 60:.1f}")
            print(f"| {k} | {link_gbps:.0f} | {row[0]} | {row[1]} |")


if __name__ == "__main__":
    main()
