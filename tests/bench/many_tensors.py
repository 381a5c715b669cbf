#!/usr/bin/env python3
"""Times wavg opening, reading and merging a checkpoint of many small tensors in every format (issue 26: a reader's
work must be near-linear in its file's size; PyTorch's name check was quadratic, 80k tensors took 26 s; issue 43: so
were the .pt and Flax writers, which only a merge into the same format exercises).

It writes one safetensors file of --tensors float32 tensors of 2 elements (names conv{i}/0, which Caffe accepts),
converts it twice to each format with wavg (not timed: a.EXT and b.EXT), then times, on each:

    inspect   `wavg inspect a`                       open: parse and check everything
    convert   `wavg convert a -o back.safetensors`   open, read every tensor, write another format
    merge     `wavg merge a b -o merged.EXT`         two inputs, written in their own format over input 1 as a
                                                     template: every reader and writer of the format at that size

each --repeat times, and prints the median wall and CPU seconds (user + system, children included: HDF5's structure
probe) with the CPU's min-max. The target is under 1 CPU-s per input for 100,000 tensors (merge: under 2 s).
With --baseline OLD_WAVG, each command runs with OLD_WAVG and with --wavg in turn (old, new, old, new, ...: a paired
measurement, both under the same load), and both medians are printed. A benchmark, not a test: numbers depend on the
machine and its load, which it prints.

    tests/bench/many_tensors.py --wavg build/wavg [--baseline OLD] [--tensors 100000] [--repeat 3] [--dir /tmp/many]
                                [--only pytorch,flax] [--no-convert] [--no-merge]
"""
import argparse
import json
import os
import shutil
import statistics
import struct
import subprocess
import tempfile
import time


def write_safetensors(path, n):
    header, data = {}, bytearray()
    for i in range(n):
        header[f"conv{i}/0"] = {"dtype": "F32", "shape": [2], "data_offsets": [8 * i, 8 * i + 8]}
        data += struct.pack("<ff", i, -i)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def timed(argv):
    """Returns the wall and CPU time (user + system) of one run, or why the command failed."""
    before = os.times()
    start = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - start
    after = os.times()
    if p.returncode != 0:
        return "failed: " + p.stderr.decode(errors="replace").strip()[:100]
    return took, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def runs(binaries, argv, repeat):
    """Runs argv with each binary in turn, `repeat` rounds; returns per binary the list of (wall, cpu) or an error."""
    out = [[] for _ in binaries]
    for _ in range(repeat):
        for k, b in enumerate(binaries):
            if isinstance(out[k], str):
                continue
            t = timed([b, *argv])
            out[k] = t if isinstance(t, str) else out[k] + [t]
    return out


def cell(t):
    if isinstance(t, str):
        return f"{t[:40]:>26}"
    wall = statistics.median(w for w, _ in t)
    cpus = [c for _, c in t]
    return f"{wall:6.2f} {statistics.median(cpus):6.2f} ({min(cpus):.2f}-{max(cpus):.2f})"


# Where a checkpoint named STEM of each format is written and read, and the options that convert or merge into it.
k_extensions = {"safetensors": ".safetensors", "hdf5": ".h5", "json": ".json", "json-base64": ".b64.json",
                "pytorch": ".pt", "tensorflow": ".ckpt", "mxnet": ".params", "caffe": ".caffemodel", "npz": ".npz",
                "flax": ".msgpack", "keras": ".keras"}
k_options = {"tfjs": ["--format", "tfjs"], "tensorflow": ["--format", "tensorflow"],
             "json-base64": ["--format", "json-base64"], "hf": ["--format", "hf", "--shard-size", "200KB"],
             "hf-bin": ["--format", "hf-bin", "--shard-size", "200KB"], "dcp": ["--format", "dcp"]}


def place(name, stem):
    if name == "tfjs":
        path = f"{stem}_tfjs/model.json"
    elif name in ("hf", "hf-bin", "dcp"):
        path = f"{stem}_{name}"
    else:
        path = stem + k_extensions[name]
    return path, k_options.get(name, [])


def size_of(name, path):
    if name == "tensorflow":
        return os.path.getsize(path + ".index") + os.path.getsize(path + ".data-00000-of-00001")
    if name == "tfjs":
        path = os.path.dirname(path)
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavg", default="build/wavg")
    ap.add_argument("--baseline", help="another wavg binary, run in turn with --wavg (a paired before/after)")
    ap.add_argument("--tensors", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir")
    ap.add_argument("--only", help="comma-separated formats")
    ap.add_argument("--no-convert", action="store_true", help="do not time convert")
    ap.add_argument("--no-merge", action="store_true", help="do not time merge")
    a = ap.parse_args()
    wavg = os.path.abspath(a.wavg)
    binaries = [os.path.abspath(a.baseline), wavg] if a.baseline else [wavg]
    work = a.dir or tempfile.mkdtemp(prefix="wavg-many-")
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    write_safetensors("seed.safetensors", a.tensors)
    names = ["safetensors", "hdf5", "json", "json-base64", "pytorch", "tfjs", "hf", "hf-bin", "tensorflow", "mxnet",
             "caffe", "npz", "flax", "keras", "dcp"]
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    load = lambda: " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{a.tensors} tensors of 2 float32 each; {a.repeat} runs; seconds: median wall, median CPU (min-max CPU), "
          f"user + system, children included; load average {load()} (1, 5, 15 min) at the start")
    if a.baseline:
        print(f"each cell: {binaries[0]} (old), then {binaries[1]} (new), run in turn")
    print(f"{'format':12} {'file MB':>8} {'':3} {'inspect':>26} {'convert':>26} {'merge':>26}")
    for name in names:
        (out_a, extra), (out_b, _), (merged, _) = (place(name, s) for s in ("a", "b", "merged"))
        failed = None
        for out in (out_a, out_b):
            os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
            p = subprocess.run([wavg, "convert", "-q", "-f", "seed.safetensors", "-o", out, *extra],
                               stderr=subprocess.PIPE)
            failed = failed or (p.returncode != 0 and p.stderr.decode(errors="replace").strip()[:80])
        if failed:
            print(f"{name:12} could not be written: {failed}")
            continue
        os.makedirs(os.path.dirname(merged) or ".", exist_ok=True)
        t_inspect = runs(binaries, ["inspect", out_a], a.repeat)
        t_convert = (["-"] * len(binaries) if a.no_convert else
                     runs(binaries, ["convert", "-q", "-f", out_a, "-o", "back.safetensors"], a.repeat))
        t_merge = (["-"] * len(binaries) if a.no_merge else
                   runs(binaries, ["merge", "-q", "-f", out_a, out_b, "-o", merged, *extra], a.repeat))
        for k, b in enumerate(binaries):
            label = ("old", "new")[k] if a.baseline else ""
            first = f"{name:12} {size_of(name, out_a) / 1e6:8.1f}" if k == 0 else " " * 21
            print(f"{first} {label:3} {cell(t_inspect[k])} {cell(t_convert[k])} {cell(t_merge[k])}", flush=True)
    print(f"load average {load()} at the end")
    if not a.dir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
