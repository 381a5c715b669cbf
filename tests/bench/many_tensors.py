#!/usr/bin/env python3
"""Times wavg opening and reading a checkpoint of many small tensors in every format (issue 26: a reader's work must
be near-linear in its file's size; PyTorch's name check was quadratic, 80k tensors took 26 s).

It writes one safetensors file of --tensors float32 tensors of 2 elements (names conv{i}/0, which Caffe accepts),
converts it to each format with wavg (not timed), then times `wavg inspect` (open: parse and check everything) and
`wavg convert FILE -o OUT.safetensors` (open, read every tensor, write) on each, fastest of --repeat runs. The
target is under a second per format for 100,000 tensors. A benchmark, not a test: numbers depend on the machine.

    tests/bench/many_tensors.py --wavg build/wavg [--tensors 100000] [--repeat 3] [--dir /tmp/many] [--no-convert]
"""
import argparse
import json
import os
import shutil
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


def fastest(argv, repeat):
    """Returns the fastest wall time and that run's CPU time (user + system), or why the command failed."""
    best = None
    for _ in range(repeat):
        before = os.times()
        start = time.perf_counter()
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        took = time.perf_counter() - start
        after = os.times()
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        if p.returncode != 0:
            return "failed: " + p.stderr.decode(errors="replace").strip()[:100]
        best = (took, cpu) if best is None or took < best[0] else best
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wavg", default="build/wavg")
    ap.add_argument("--tensors", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir")
    ap.add_argument("--no-convert", action="store_true", help="time opening only (inspect)")
    a = ap.parse_args()
    wavg = os.path.abspath(a.wavg)
    work = a.dir or tempfile.mkdtemp(prefix="wavg-many-")
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    write_safetensors("seed.safetensors", a.tensors)
    # format -> (output given to convert, extra options, what to read)
    formats = {"safetensors": ("seed.safetensors", None, "seed.safetensors"),
               "hdf5": ("m.h5", [], "m.h5"), "json": ("m.json", [], "m.json"),
               "pytorch": ("m.pt", [], "m.pt"), "tfjs": ("tfjs/model.json", ["--format", "tfjs"], "tfjs/model.json"),
               "hf": ("hf/", ["--shard-size", "200KB"], "hf"),
               "tensorflow": ("m.ckpt", ["--format", "tensorflow"], "m.ckpt"),
               "mxnet": ("m.params", [], "m.params"), "caffe": ("m.caffemodel", [], "m.caffemodel")}
    os.makedirs("tfjs", exist_ok=True)
    load = lambda: " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{a.tensors} tensors of 2 float32 each; fastest of {a.repeat}; seconds, wall and CPU (user + system, "
          f"children included: HDF5's structure probe); load average {load()} (1, 5, 15 min) at the start")
    print(f"{'format':12} {'file MB':>8} {'inspect wall/cpu':>17} {'convert wall/cpu':>17}  CPU under 1 s")
    for name, (out, extra, read) in formats.items():
        if extra is not None:
            p = subprocess.run([wavg, "convert", "-q", "seed.safetensors", "-o", out, *extra], stderr=subprocess.PIPE)
            if p.returncode != 0:
                print(f"{name:12} could not be written: {p.stderr.decode(errors='replace').strip()[:80]}")
                continue
        if name == "tensorflow":
            size = os.path.getsize("m.ckpt.index") + os.path.getsize("m.ckpt.data-00000-of-00001")
        elif os.path.isdir(read):
            size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(read) for f in fs)
        else:
            size = os.path.getsize(read)
        t_inspect = fastest([wavg, "inspect", read], a.repeat)
        t_convert = "-" if a.no_convert else fastest([wavg, "convert", "-q", "-f", read, "-o", "back.safetensors"],
                                                     a.repeat)
        cell = lambda t: f"{t[0]:8.2f} {t[1]:8.2f}" if isinstance(t, tuple) else f"{t:>17}"
        cpus = [t[1] for t in (t_inspect, t_convert) if isinstance(t, tuple)]
        print(f"{name:12} {size / 1e6:8.1f} {cell(t_inspect)} {cell(t_convert)}  "
              f"{'yes' if cpus and max(cpus) < 1 else 'no'}")
    print(f"load average {load()} at the end")
    if not a.dir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
