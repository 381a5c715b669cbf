#!/usr/bin/python3
"""The paper cost model of `wavg allreduce`'s two algorithms at scale, from per-byte costs measured here.

For K ranks and a model of M bytes, per rank and per average (bandwidth-bound; the per-message latency term,
alpha times the messages, is printed too but is small at these sizes):

    gather:          sends and receives (K-1) M         sums K inputs of M bytes:   (K-1) M / B + K M c
    reduce-scatter:  sends and receives 2 (K-1)/K M     sums K inputs of M/K bytes: 2 (K-1)/K M / B + M c

B is the link bandwidth (100 Gb/s = 12.5 GB/s per direction, full duplex, a non-blocking switch) and c the
seconds per input byte of wavg's ordered sum, measured by tests/bench/mpi_bench.py (--stats' compute seconds
over the input bytes a rank summed). Messages per chunk: K-1 (gather, 4 MiB chunks per rank) or 2 (K-1)
(reduce-scatter, chunks of K x 4 MiB up to 1 GiB).

    tests/bench/mpi_cost_model.py --sum-ns-per-byte 0.5 [--alpha-us 2]
"""

import argparse

MIB = 1 << 20


def costs(k, m, bandwidth, c, alpha):
    gather_chunks = -(-m // (4 * MIB))
    rs_chunks = -(-m // min(k * 4 * MIB, 1 << 30))
    gather = ((k - 1) * m / bandwidth, k * m * c, alpha * gather_chunks * (k - 1))
    rs = (2 * (k - 1) / k * m / bandwidth, m * c, alpha * rs_chunks * 2 * (k - 1))
    return gather, rs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sum-ns-per-byte", type=float, required=True)
    ap.add_argument("--alpha-us", type=float, default=2.0)
    ap.add_argument("--gbit", type=float, default=100.0)
    args = ap.parse_args()
    bandwidth = args.gbit / 8 * 1e9
    c, alpha = args.sum_ns_per_byte * 1e-9, args.alpha_us * 1e-6
    print("| K | model | gather: network + sum + latency = total s | reduce-scatter: network + sum + latency = total s "
          "| speed-up |")
    print("|---|---|---|---|---|")
    for k in (8, 64, 512):
        for gb in (1, 10):
            m = gb * 10**9
            g, r = costs(k, m, bandwidth, c, alpha)
            fmt = lambda t: f"{t[0]:.2f} + {t[1]:.2f} + {t[2]:.3f} = {sum(t):.2f}"  # noqa: E731
            print(f"| {k} | {gb} GB | {fmt(g)} | {fmt(r)} | {sum(g) / sum(r):.0f}x |")


if __name__ == "__main__":
    main()
