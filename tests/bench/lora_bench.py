#!/usr/bin/env python3
"""Times wavg aggregating LoRA adapters (issue 44): N adapters of rank R over the attention and MLP projections of a
Llama-shaped model (default: Llama-3.2-1B's, hidden 2048, MLP 8192, 16 layers, 8 key/value heads of 64: 112 modules,
11.1M parameters an adapter at rank 16), written as PEFT folders with numpy, then merged by

    exact       `wavg merge c1 ... cN -o out/`                the mean update, factors stacked (rank N x R)
    factorwise  `wavg merge ... --lora factorwise -o out/`    FedIT's means of A and of B
    svd:R       `wavg merge ... --lora svd:R -o out/`         the mean update cut back to rank R (QR + SVD per module)

each against the I/O floor: `cat` of every adapter to /dev/null, then a file of the output's size written and
synced. Then, per module shape (in x out), the cost of svd:R alone: N single-module adapters merged with svd:R and
with exact, the difference being the re-factoring. Prints wall and CPU seconds (user + system), the median and range
of --repeat runs, and the load average before and after. With --against OLD, every run of wavg is paired with one of
OLD (another build) right after it, so both see the same load. A benchmark, not a test: numbers depend on the machine
and its load. Inputs are read from the page cache (each is read once before timing).

    tests/bench/lora_bench.py --wavg build/wavg [--against OLD] [--methods exact,factorwise,svd] [--adapters 8]
                              [--rank 16] [--layers 16] [--repeat 3] [--dir /tmp/lora_bench] [--keep]
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import time

import numpy as np

PREFIX = "base_model.model.model.layers."


def shapes(hidden, mlp, kv):
    """(module, out, in) of one decoder layer's adapted projections."""
    return [("self_attn.q_proj", hidden, hidden), ("self_attn.k_proj", kv, hidden), ("self_attn.v_proj", kv, hidden),
            ("self_attn.o_proj", hidden, hidden), ("mlp.gate_proj", mlp, hidden), ("mlp.up_proj", mlp, hidden),
            ("mlp.down_proj", hidden, mlp)]


def write_safetensors(path, tensors, metadata):
    """float32 tensors as safetensors, written in one pass."""
    header, at = {"__metadata__": metadata}, 0
    for name, a in tensors.items():
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [at, at + a.nbytes]}
        at += a.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for a in tensors.values():
            f.write(np.ascontiguousarray(a).tobytes())


def write_adapter(folder, modules, rank, seed):
    rng = np.random.default_rng(seed)
    tensors = {}
    for name, out, inp in modules:
        tensors[name + ".lora_A.weight"] = rng.standard_normal((rank, inp), np.float32) / np.sqrt(inp)
        tensors[name + ".lora_B.weight"] = rng.standard_normal((out, rank), np.float32) * 0.01
    os.makedirs(folder, exist_ok=True)
    config = {"peft_type": "LORA", "r": rank, "lora_alpha": 2 * rank, "target_modules": sorted(
        {n.split(".")[-1] for n, _, _ in modules}), "base_model_name_or_path": "bench/llama-1b",
        "use_rslora": False, "use_dora": False, "modules_to_save": None, "rank_pattern": {}, "alpha_pattern": {}}
    with open(os.path.join(folder, "adapter_config.json"), "w") as f:
        json.dump(config, f, indent=2)
    write_safetensors(os.path.join(folder, "adapter_model.safetensors"), tensors, {"format": "pt"})


def cpu():
    t = os.times()
    return t.children_user + t.children_system


def timed(argv):
    c, start = cpu(), time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode != 0:
        sys.exit("failed: " + " ".join(argv) + "\n" + p.stderr.decode(errors="replace"))
    return time.perf_counter() - start, cpu() - c


def runs(argv, repeat, before=None):
    """(wall, CPU) of each of `repeat` runs."""
    out = []
    for _ in range(repeat):
        if before:
            before()
        out.append(timed(argv))
    return out


def spread(values):
    """The median and range of `values`: "1.23 (1.20-1.31)"."""
    v = sorted(values)
    mid = v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
    return "%.2f (%.2f-%.2f)" % (mid, v[0], v[-1]) if len(v) > 1 else "%.2f" % mid


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def floor(inputs, out_bytes, scratch, repeat):
    """cat of every input, then out_bytes written and synced: the least a merge must do. (wall, CPU) of each run."""
    def once():
        c, start = cpu(), time.perf_counter()
        subprocess.run(["cat"] + inputs, stdout=subprocess.DEVNULL, check=True)
        subprocess.run(["dd", "if=/dev/zero", "of=" + scratch, "bs=1M", "count=%d" % max(1, out_bytes >> 20),
                        "conv=fsync", "status=none"], check=True)
        return time.perf_counter() - start, cpu() - c
    return [once() for _ in range(repeat)]


def size(folder):
    return os.path.getsize(os.path.join(folder, "adapter_model.safetensors"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--wavg", required=True)
    ap.add_argument("--against", help="another wavg build, each of its runs paired with one of --wavg's")
    ap.add_argument("--methods", default="exact,factorwise,svd", help="which merges to time; svd adds the "
                    "per-module table")
    ap.add_argument("--adapters", type=int, default=8)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--mlp", type=int, default=8192)
    ap.add_argument("--kv", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default="/tmp/lora_bench")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    layer = shapes(a.hidden, a.mlp, a.kv)
    modules = [(PREFIX + "%d.%s" % (i, n), o, k) for i in range(a.layers) for n, o, k in layer]
    clients = [os.path.join(a.dir, "c%d" % k) for k in range(a.adapters)]
    for k, c in enumerate(clients):
        if not os.path.exists(os.path.join(c, "adapter_model.safetensors")):
            write_adapter(c, modules, a.rank, k)
    files = [os.path.join(c, "adapter_model.safetensors") for c in clients]
    subprocess.run(["cat"] + files, stdout=subprocess.DEVNULL, check=True)  # into the page cache
    params = sum(a.rank * (o + k) for _, o, k in modules)
    print("%d adapters of rank %d, %d modules, %.1fM parameters (%.0f MiB) each" %
          (a.adapters, a.rank, len(modules), params / 1e6, size(clients[0]) / 2**20))
    out = os.path.join(a.dir, "out")
    rm = lambda: shutil.rmtree(out, ignore_errors=True)  # noqa: E731
    methods = a.methods.split(",")
    builds = [("wavg", a.wavg)] + ([("against", a.against)] if a.against else [])
    print("| run | build | output MiB | wall s | CPU s | floor wall s | floor CPU s |")
    print("|---|---|---|---|---|---|---|")
    for name, extra in (("exact", []), ("factorwise", ["--lora", "factorwise"]),
                        ("svd:%d" % a.rank, ["--lora", "svd:%d" % a.rank])):
        if name.split(":")[0] not in methods:
            continue
        times = {b: [] for b, _ in builds}
        for _ in range(a.repeat):  # paired: each build once per round, so both see the same load
            for b, path in builds:
                times[b] += runs([path, "merge", "-q"] + clients + extra + ["-o", out + "/"], 1, rm)
        out_bytes = size(out)
        fl = floor(files, out_bytes, os.path.join(a.dir, "floor.bin"), a.repeat)
        for b, path in builds:
            print("| %s | %s | %.0f | %s | %s | %s | %s |" % (
                name, b, out_bytes / 2**20, spread([w for w, _ in times[b]]), spread([c for _, c in times[b]]),
                spread([w for w, _ in fl]), spread([c for _, c in fl])))
    if "svd" not in methods:
        print("load average after: %.2f %.2f %.2f" % os.getloadavg())
        return
    print()
    print("svd:%d re-factoring per module, %d adapters (svd minus exact, CPU seconds, medians of %d):" %
          (a.rank, a.adapters, a.repeat))
    print("| module (out x in) | exact CPU s | svd CPU s | per module ms |")
    print("|---|---|---|---|")
    for n, o, k in sorted({(n.split(".")[-1], o, k) for n, o, k in layer}, key=lambda t: (t[1] * t[2], t[0])):
        count = 16  # modules of this shape in each adapter, to time more than the start-up
        one = [(PREFIX + "%d.x.%s" % (i, n), o, k) for i in range(count)]
        cs = [os.path.join(a.dir, "m_%s_%d" % (n, j)) for j in range(a.adapters)]
        for j, c in enumerate(cs):
            if not os.path.exists(os.path.join(c, "adapter_model.safetensors")):
                write_adapter(c, one, a.rank, 100 + j)
        ec = median([c for _, c in runs([a.wavg, "merge", "-q", "--no-hash"] + cs + ["-o", out + "/"], a.repeat,
                                        rm)])
        sc = median([c for _, c in runs([a.wavg, "merge", "-q", "--no-hash"] + cs + ["--lora", "svd:%d" % a.rank,
                                         "-o", out + "/"], a.repeat, rm)])
        print("| %s (%d x %d) | %.2f | %.2f | %.0f |" % (n, o, k, ec, sc, 1000 * (sc - ec) / count))
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    if not a.keep:
        shutil.rmtree(a.dir, ignore_errors=True)


if __name__ == "__main__":
    main()
