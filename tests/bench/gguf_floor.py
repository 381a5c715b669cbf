#!/usr/bin/env python3
"""A GGUF merge of two Q8_0 models against its I/O floor (issue 45's benchmark).

    tests/bench/gguf_floor.py --wavg build/wavg [--params 100e6] [--rounds 3] [--dir D] [--keep]

Writes two GGUF files of a Llama-shaped model of about --params parameters (layers of 2048-wide attention and
5632-wide MLP matrices in Q8_0, norms in F32, as llama.cpp's convert_hf_to_gguf.py --outtype q8_0 lays out
TinyLlama-1.1B; --params 1.1e9 is that size), the bytes assembled here with numpy (random int8 and float16 scales:
the values do not matter to the time), reads them once into the page cache, then runs, back to back in each of
--rounds rounds: the floor (cat both inputs to /dev/null, write a file of the output's size and sync it), `wavg
merge -j 1 A B -o OUT` and `wavg merge A B -o OUT` (every thread; default options: the output Q8_0 as input 1,
every block decoded, averaged in double and encoded again; wavg fsyncs its output). On a shared machine one round
may be slowed and the next not, so each wavg run is divided by the floor of its own round (a pair), and the
medians of those ratios are reported beside the median wall and CPU seconds, with the 1-minute load average
before each round. The outputs of 1 and all threads are compared byte for byte.
"""

import argparse
import os
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

WIDTH, FF = 2048, 5632
Q8_0, F32 = 8, 0


def layout(params):
    """(name, ne, type) of a Llama-shaped model of about `params` values: embeddings, layers, output."""
    vocab = 32000
    per_layer = 2 * WIDTH * WIDTH + 2 * WIDTH * (WIDTH // 8) + 3 * WIDTH * FF  # K and V: 4 of 32 heads (GQA)
    layers = max(1, round((params - 2 * vocab * WIDTH) / per_layer))
    out = [("token_embd.weight", (WIDTH, vocab), Q8_0)]
    for b in range(layers):
        out += [(f"blk.{b}.attn_norm.weight", (WIDTH,), F32),
                (f"blk.{b}.attn_q.weight", (WIDTH, WIDTH), Q8_0),
                (f"blk.{b}.attn_k.weight", (WIDTH, WIDTH // 8), Q8_0),
                (f"blk.{b}.attn_v.weight", (WIDTH, WIDTH // 8), Q8_0),
                (f"blk.{b}.attn_output.weight", (WIDTH, WIDTH), Q8_0),
                (f"blk.{b}.ffn_norm.weight", (WIDTH,), F32),
                (f"blk.{b}.ffn_gate.weight", (WIDTH, FF), Q8_0),
                (f"blk.{b}.ffn_up.weight", (WIDTH, FF), Q8_0),
                (f"blk.{b}.ffn_down.weight", (FF, WIDTH), Q8_0)]
    return out + [("output_norm.weight", (WIDTH,), F32), ("output.weight", (WIDTH, vocab), Q8_0)]


def nbytes(ne, kind):
    n = int(np.prod(ne))
    return n * 4 if kind == F32 else n // 32 * 34


def string(s):
    return struct.pack("<Q", len(s)) + s.encode()


def write_gguf(path, tensors, seed):
    rng = np.random.default_rng(seed)
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1) + string("general.architecture") + struct.pack("<I", 8) \
        + string("llama")
    offset = 0
    for name, ne, kind in tensors:
        head += string(name) + struct.pack("<I", len(ne)) + struct.pack(f"<{len(ne)}Q", *ne) \
            + struct.pack("<IQ", kind, offset)
        offset += -(-nbytes(ne, kind) // 32) * 32
    with open(path, "wb") as f:
        f.write(head + b"\0" * (-len(head) % 32))
        for name, ne, kind in tensors:
            n = int(np.prod(ne))
            if kind == F32:
                data = (1 + rng.standard_normal(n, dtype=np.float32) * 0.01).tobytes()
            else:
                blocks = np.empty((n // 32, 34), np.uint8)
                blocks[:, :2] = rng.uniform(1e-4, 1e-3, (n // 32, 1)).astype(np.float16).view(np.uint8)
                blocks[:, 2:] = rng.integers(0, 256, (n // 32, 32), dtype=np.uint8)
                data = blocks.tobytes()
            f.write(data + b"\0" * (-len(data) % 32))


def timed(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, shell=isinstance(cmd, str), check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--wavg", required=True)
    p.add_argument("--params", type=float, default=100e6)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--dir", default=None)
    p.add_argument("--keep", action="store_true")
    a = p.parse_args()
    tmp = tempfile.mkdtemp(dir=a.dir, prefix="gguf-bench-")
    tensors = layout(a.params)
    values = sum(int(np.prod(ne)) for _, ne, _ in tensors)
    inputs = [os.path.join(tmp, f"{x}.gguf") for x in "ab"]
    for seed, path in enumerate(inputs):
        write_gguf(path, tensors, seed)
    size = os.path.getsize(inputs[0])
    out, floor_out = os.path.join(tmp, "out.gguf"), os.path.join(tmp, "floor.out")
    subprocess.run(["cat"] + inputs, stdout=subprocess.DEVNULL, check=True)
    print(f"{values / 1e6:.0f}M values, {len(tensors)} tensors, 2 x {size / 2**20:.0f} MiB Q8_0; "
          f"load {os.getloadavg()[0]:.2f}", file=sys.stderr)
    floor_cmd = (f"cat {' '.join(inputs)} > /dev/null && head -c {size} /dev/zero > {floor_out} && "
                 f"sync {floor_out}")
    out1 = os.path.join(tmp, "out1.gguf")
    runs = {"floor": floor_cmd, "wavg -j 1": [a.wavg, "merge", "-q", "-f", "-j", "1", *inputs, "-o", out1],
            "wavg": [a.wavg, "merge", "-q", "-f", *inputs, "-o", out]}
    rows = {k: [] for k in runs}
    loads = []
    for _ in range(a.rounds):
        loads.append(os.getloadavg()[0])
        for k, cmd in runs.items():
            rows[k].append(timed(cmd))
    with open(out, "rb") as x, open(out1, "rb") as y:
        same = x.read() == y.read()
    median = statistics.median
    print(f"{a.rounds} rounds, threads: {os.cpu_count()}; load before each: " + ", ".join(f"{x:.1f}" for x in loads))
    print("| run | median wall s | median CPU s | median wall / floor (paired) |\n|---|---|---|---|")
    for k, v in rows.items():
        ratio = median(w / f for (w, _), (f, _) in zip(v, rows["floor"]))
        print(f"| {k} | {median(w for w, _ in v):.2f} | {median(c for _, c in v):.2f} | {ratio:.2f} |")
    print(f"outputs of 1 and all threads {'identical' if same else 'DIFFER'}; load after {os.getloadavg()[0]:.2f}")
    if not same:
        sys.exit(1)
    if not a.keep:
        for f in inputs + [out, out1, floor_out]:
            if os.path.exists(f):
                os.remove(f)
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
