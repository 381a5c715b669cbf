#!/usr/bin/env python3
"""Benchmarks `wavg merge` against the cost of just moving the bytes and against the usual scripts.

For every model size and input count asked for it generates the checkpoints deterministically (bench_models.py),
reads them once so they sit in the page cache, then runs each command --repeat times, interleaved, keeping the
fastest run. Peak memory is the maximum resident set size of the command and the children it waited for, as GNU
`/usr/bin/time` reports it (Debian package `time`). Every command leaves its output on disk: wavg fsyncs before its
rename, so the floor and the peers get a `sync OUT` inside their timing.

Beside each figure the table prints what bounds it: the megabytes the command reads (every pass of a method) and
writes, and the CPU seconds it used (user + system over all its threads, from the same /usr/bin/time).

Commands: the floor (cat every input to /dev/null, write one output of the same size, sync it); wavg merge on HDF5 at
each --threads count; wavg on safetensors when `wavg inspect` accepts them; an h5py + numpy script; numpy over
memory-mapped safetensors; wavg on PyTorch .pt files and PyTorch's load/stack/mean/save when --torch-python (or the
python running this) can import torch. A peer that cannot run here prints n/a.

--methods adds rows for the other averaging methods on the HDF5 inputs (weighted, FedAvg by a metadata entry with
a server optimizer, median, trimmed mean, krum, geometric median, clipping with noise, the task-vector methods,
EMA over a --last sequence), each set against its own floor when it reads more than the inputs once; --convert
adds `wavg convert` between HDF5 and safetensors with its own floor (cat one input, write one output).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

TIME = "/usr/bin/time"  # GNU time (Debian package `time`)
READS = {}  # label -> bytes a command's passes read, where its arguments do not say (a method's own floor files)
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_models  # noqa: E402


def timed(argv):
    """Runs argv under /usr/bin/time; returns (seconds, peak RSS in MiB, CPU seconds user + system), or None when it
    fails. (wait4() from this process would count the Python interpreter's own memory, which the forked child
    inherits until its exec.)"""
    with tempfile.NamedTemporaryFile("r") as report:
        start = time.perf_counter()
        proc = subprocess.run([TIME, "-f", "%M %U %S", "-o", report.name, *argv], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip()[-300:]
            print(f"  failed ({proc.returncode}): {' '.join(argv[:3])} ...: {err}", file=sys.stderr)
            return None
        rss, user, system = report.read().split()[-3:]
        return seconds, int(rss) / 1024, float(user) + float(system)


def can_import(python, module):
    if not python or not shutil.which(python):
        return False
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def wavg_reads(wavg, path):
    return subprocess.run([wavg, "inspect", path], capture_output=True).returncode == 0


def commands(args, model, n, paths, out_dir):
    """Returns [(label, argv or None, output path)] for one case; argv None means n/a."""
    h5, st, pt = paths.get("h5", []), paths.get("safetensors", []), paths.get("pt", [])
    size = os.path.getsize(h5[0])
    out = lambda ext: os.path.join(out_dir, f"bench-out.{ext}")  # noqa: E731
    synced = lambda argv, o: ["sh", "-c", '"$@" && sync "$0"', o] + argv  # noqa: E731
    cmds = [("floor: cat inputs + write output", ["sh", "-c", f'cat "$@" >/dev/null && head -c {size} /dev/zero'
                                                f' >"$0" && sync "$0"', out("floor")] + h5, out("floor"))]
    for t in args.threads:
        cmds.append((f"wavg merge HDF5 -j{t}", [args.wavg, "merge", "-q", f"-j{t}", *h5, "-o", out("h5")], out("h5")))
    j = f"-j{args.threads[-1]}"
    # The same merge with each way of fingerprinting the inputs (the default rows above use the default,
    # XXH3-128, on builds that have --hash): SHA-256, and none at all, whose difference is the hashing's cost.
    t = f"-j{args.threads[0]}"
    hash_rows = hash_variants(args.wavg)
    for flags in hash_rows:
        cmds.append((f"wavg merge HDF5 {' '.join(flags)} {t}",
                     [args.wavg, "merge", "-q", t, *flags, *h5, "-o", out("h5")], out("h5")))
    floor_files = h5
    for label, extra, files in method_rows(args, n, out_dir, h5):
        if files != floor_files:  # a method's own floor: the bytes its passes read, then the output written
            floor_files = files
            cmds.append((f"floor: cat {len(files)} files + write output",
                         ["sh", "-c", f'cat "$@" >/dev/null && head -c {size} /dev/zero >"$0" && sync "$0"',
                          out("floor")] + files, out("floor")))
        inputs = [] if "--last" in extra else [f for f in h5 if f in files]
        cmds.append((f"wavg {label} {j}", [args.wavg, "merge", "-q", j, *extra, *inputs, "-o", out("h5")], out("h5")))
        READS[cmds[-1][0]] = sum(os.path.getsize(f) for f in files)
    if st:
        ok = wavg_reads(args.wavg, st[0])
        cmds.append((f"wavg merge safetensors -j{args.threads[-1]}",
                     [args.wavg, "merge", "-q", f"-j{args.threads[-1]}", *st, "-o", out("safetensors")]
                     if ok else None, out("safetensors")))
        for flags in hash_rows:
            cmds.append((f"wavg merge safetensors {' '.join(flags)} {t}",
                         [args.wavg, "merge", "-q", t, *flags, *st, "-o", out("safetensors")]
                         if ok else None, out("safetensors")))
    # PyTorch zip files: the storages are memory-mapped from the archive, so the same merge as on safetensors.
    if pt:
        ok = wavg_reads(args.wavg, pt[0])
        cmds.append((f"wavg merge PyTorch .pt {j}",
                     [args.wavg, "merge", "-q", j, *pt, "-o", out("wavg.pt")] if ok else None, out("wavg.pt")))
        for flags in hash_rows:
            cmds.append((f"wavg merge PyTorch .pt {' '.join(flags)} {t}",
                         [args.wavg, "merge", "-q", t, *flags, *pt, "-o", out("wavg.pt")] if ok else None,
                         out("wavg.pt")))
    if args.convert and st:
        one = os.path.getsize(st[0])
        cmds.append(("floor: cat 1 input + write output", ["sh", "-c", f'cat "$1" >/dev/null && head -c {one}'
                                                         f' /dev/zero >"$0" && sync "$0"', out("floor"), st[0]],
                     out("floor")))
        cmds.append((f"wavg convert HDF5 -> safetensors {j}",
                     [args.wavg, "convert", "-q", j, h5[0], "-o", out("safetensors")], out("safetensors")))
        cmds.append((f"wavg convert safetensors -> HDF5 {j}",
                     [args.wavg, "convert", "-q", j, st[0], "-o", out("h5")], out("h5")))
    if not args.wavg_only:
        py = sys.executable
        cmds.append(("h5py + numpy script", synced([py, os.path.join(HERE, "peers", "h5py_numpy.py"),
                                                    out("peer.h5"), *h5], out("peer.h5"))
                     if can_import(py, "h5py") else None, out("peer.h5")))
        cmds.append(("numpy over mmap safetensors",
                     synced([py, os.path.join(HERE, "peers", "numpy_safetensors.py"), out("peer.st"), *st],
                            out("peer.st")) if st else None, out("peer.st")))
        cmds.append(("PyTorch load/stack/mean/save",
                     synced([args.torch_python, os.path.join(HERE, "peers", "torch_mean.py"), out("pt"), *pt],
                            out("pt")) if pt else None, out("pt")))
    return cmds


def hash_variants(wavg):
    """Returns the fingerprint flags this wavg knows beside its default: --hash sha256 / none, or the older
    --no-hash (SHA-256 was the default then)."""
    helptext = subprocess.run([wavg, "merge", "--help"], capture_output=True, text=True).stdout
    if "--hash" in helptext:
        return [["--hash", "sha256"], ["--hash", "none"]]
    return [["--no-hash"]] if "--no-hash" in helptext else []


def method_rows(args, n, out_dir, h5, base=None):
    """Returns [(label, extra merge arguments, files it reads)] for --methods: each method at its usual settings for
    N inputs (`h5`: any one format) and a `base` checkpoint (default: bench-base.h5 in --dir). The files list every
    read: an input read by three passes appears three times (the method's floor)."""
    if not args.methods:
        return []
    state = os.path.join(out_dir, "bench-adam-state.safetensors")
    base = base or os.path.join(args.dir, "bench-base.h5")
    with_base = lambda passes, files=h5: (files + [base]) * passes  # noqa: E731
    rows = {
        "weighted": ("merge --weights", ["--weights", ",".join(str(k) for k in range(1, n + 1))], h5),
        "fedavg-adam": ("merge --base --weight-by --server-opt adam",
                        ["--base", base, "--weight-by", "num_examples", "--server-opt", "adam", "--state", state],
                        h5),
        "median": ("merge --method median", ["--method", "median"], h5),
        "trimmed-mean": ("merge --method trimmed-mean", ["--method", "trimmed-mean", "--trim", "0.25"], h5),
        "krum": ("merge --method krum", ["--method", "krum", "--byzantine", str(max(0, (n - 3) // 2))], h5),
        "geometric-median": ("merge --method geometric-median", ["--method", "geometric-median"], h5),
        "dp": ("merge --base --clip --noise-multiplier",
               ["--base", base, "--clip", "1000", "--noise-multiplier", "0.1", "--seed", "1"], h5),
        # Fine-tunes of one base (issue 19): the base is a copy of input 1, so its task vector is zero.
        "task-arithmetic": ("merge --method task-arithmetic", ["--base", base, "--method", "task-arithmetic",
                                                                 "--lambda", "0.5"], with_base(1)),
        # TIES and DARE (L1 rescale) take a tensor of one engine block in one read; only larger ones (here the
        # 38.6M-value embedding) are read by the threshold or norm pass first: the floor is one read (issue 43).
        "ties": ("merge --method ties", ["--base", base, "--method", "ties", "--density", "0.2"], with_base(1)),
        "dare-linear": ("merge --method dare-linear", ["--base", base, "--method", "dare-linear", "--density",
                                                         "0.3", "--seed", "1"], with_base(1)),
        "dare-ties": ("merge --method dare-ties", ["--base", base, "--method", "dare-ties", "--density", "0.3",
                                                     "--seed", "1"], with_base(1)),
        "slerp": ("merge --method slerp (2 inputs)", ["--method", "slerp", "--t", "0.3"], h5[:2] * 2),
        "model-stock": ("merge --method model-stock", ["--base", base, "--method", "model-stock"], with_base(2)),
        "ema": ("merge --last N --schedule ema:0.9", ["--last", str(n), os.path.join(args.dir, "bench-run"),
                                                      "--schedule", "ema:0.9"], h5),
    }
    names = list(rows) if args.methods == "all" else args.methods.split(",")
    return [rows[name] for name in names]


def check_output(path, model, inputs):
    """Compares wavg's HDF5 output bit for bit with the float64 mean numpy computes from the inputs."""
    import h5py
    import numpy as np
    files = [h5py.File(p, "r") for p in inputs]
    bad = []
    with h5py.File(path, "r") as o:
        for layer, weight, _ in bench_models.layout(model):
            name = f"model_weights/{layer}/{layer}/{weight}"
            want = (sum(f[name][()].astype(np.float64) for f in files) / len(files)).astype(np.float32)
            if want.tobytes() != o[name][()].tobytes():
                bad.append(name)
    return bad


def run_case(args, model, n):
    kinds = ["h5"] + (["safetensors"] if "safetensors" in args.formats else [])
    if args.torch_python and (not args.wavg_only or "pt" in args.formats):
        kinds.append("pt")
    paths = bench_models.generate(args.dir, model, n, kinds, args.torch_python)
    out_dir = args.out_dir or args.dir
    if args.methods:
        shutil.copyfile(paths["h5"][0], os.path.join(args.dir, "bench-base.h5"))
        run = os.path.join(args.dir, "bench-run")  # the inputs as a run directory, for --last
        os.makedirs(run, exist_ok=True)
        for k, p in enumerate(paths["h5"]):
            link = os.path.join(run, f"round-{k + 1:04d}.h5")
            if not os.path.lexists(link):
                os.symlink(os.path.abspath(p), link)
    cmds = commands(args, model, n, paths, out_dir)
    for p in sum(paths.values(), []):  # into the page cache
        with open(p, "rb") as f:
            while f.read(64 << 20):
                pass
    best = {}
    for _ in range(args.repeat):
        for label, argv, out in cmds:
            if argv is None:
                continue
            for stale in (out, os.path.join(out_dir, "bench-adam-state.safetensors")):
                if os.path.exists(stale):
                    os.remove(stale)
            r = timed(argv)
            if r and (label not in best or r[0] < best[label][0]):
                best[label] = r + (bytes_read(label, argv, out), written_bytes(out))
    if args.check:  # the last command writing bench-out.h5 must be the plain mean
        timed([args.wavg, "merge", "-q", "-f", *paths["h5"], "-o", os.path.join(out_dir, "bench-out.h5")])
    bad = check_output(os.path.join(out_dir, "bench-out.h5"), model, paths["h5"]) if args.check else []
    for out in [c[2] for c in cmds] + [os.path.join(args.dir, "bench-base.h5")]:
        if os.path.exists(out):
            os.remove(out)
    shutil.rmtree(os.path.join(args.dir, "bench-run"), ignore_errors=True)
    input_bytes = n * os.path.getsize(paths["h5"][0])
    return cmds, best, input_bytes, bad


def bytes_read(label, argv, out):
    """The bytes a command reads: its method's passes (READS), else every data file among its arguments (not the
    output, programs or scripts)."""
    if label in READS:
        return READS[label]
    return sum(os.path.getsize(a) for a in argv
               if a != out and os.path.isfile(a) and not a.endswith(".py") and not os.access(a, os.X_OK))


def written_bytes(out):
    """The bytes of a command's output: a file, or a folder's files."""
    if os.path.isdir(out):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    return os.path.getsize(out) if os.path.exists(out) else 0


def print_table(model, n, cmds, best, input_bytes):
    floor = None  # each row is set against the floor row above it (merge, then convert)
    peer = best.get("h5py + numpy script", (None,))[0]
    print(f"\n{model} parameters ({bench_models.parameters(model):,}), N = {n}, "
          f"{input_bytes / 1e6:,.0f} MB of inputs")
    # What bounds each figure beside it: the bytes it must read and write (the floor's cat moves the same) and the
    # CPU seconds it spent (user + system, all threads); CPU above the wall time means threads ran in parallel.
    print(f"| {'command':<44} | {'time s':>7} | {'peak RSS MiB':>12} | {'x floor':>7} | {'h5py script / this':>18} "
          f"| {'read MB':>7} | {'written MB':>10} | {'CPU s':>6} |")
    print(f"|{'-' * 46}|{'-' * 8}:|{'-' * 13}:|{'-' * 8}:|{'-' * 19}:|{'-' * 8}:|{'-' * 11}:|{'-' * 7}:|")
    for label, argv, _ in cmds:
        if label.startswith("floor"):
            floor = best.get(label, (None,))[0]
            if label != cmds[0][0]:
                peer = None  # the h5py script merges; it is no yardstick for convert
        if label not in best:
            print(f"| {label:<44} | {'n/a':>7} | {'n/a':>12} | {'':>7} | {'':>18} | {'':>7} | {'':>10} | {'':>6} |")
            continue
        s, rss, cpu, read, written = best[label]
        xf = f"{s / floor:.2f}" if floor else ""
        xp = f"{peer / s:.1f}" if peer else ""
        print(f"| {label:<44} | {s:7.2f} | {rss:12.0f} | {xf:>7} | {xp:>18} | {read / 1e6:7.1f} | "
              f"{written / 1e6:10.1f} | {cpu:6.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny model, 2 inputs, one run: a smoke test in seconds")
    ap.add_argument("--dir", default="/tmp/wavg-bench",
                    help="where the checkpoints are generated (default %(default)s)")
    ap.add_argument("--out-dir", help="where outputs go (default: --dir)")
    ap.add_argument("--models", default="124M", help=f"comma list of {','.join(bench_models.MODELS)}")
    ap.add_argument("--inputs", default="4", help="comma list of input counts N")
    ap.add_argument("--threads", default="1,2", help="comma list of wavg thread counts")
    ap.add_argument("--formats", default="h5,safetensors", help="h5, safetensors and/or pt (pt: torch.save files, "
                    "made when torch imports; always with the peers)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per command; the fastest counts")
    ap.add_argument("--wavg", default=shutil.which("wavg") or os.path.join(HERE, "..", "..", "build", "wavg"))
    ap.add_argument("--torch-python", help="a python that can import torch (e.g. a venv's), for the PyTorch peer")
    ap.add_argument("--wavg-only", action="store_true", help="run the floor and wavg only (scaling tables)")
    ap.add_argument("--methods", help="comma list of weighted,fedavg-adam,median,trimmed-mean,krum,"
                    "geometric-median,dp,task-arithmetic,ties,dare-linear,dare-ties,slerp,model-stock,ema, or all")
    ap.add_argument("--convert", action="store_true", help="also time wavg convert HDF5 <-> safetensors")
    ap.add_argument("--check", action="store_true", help="check wavg's output bit for bit against numpy's mean")
    ap.add_argument("--keep", action="store_true", help="keep the generated checkpoints")
    args = ap.parse_args()
    if args.quick:
        args.models, args.inputs, args.repeat = "tiny", "2", 1
    args.models = args.models.split(",")
    args.threads = [int(t) for t in args.threads.split(",")]
    if not args.torch_python and can_import(sys.executable, "torch"):
        args.torch_python = sys.executable
    if args.torch_python and not can_import(args.torch_python, "torch"):
        args.torch_python = None
    if not os.access(TIME, os.X_OK):
        print(f"bench: {TIME} is missing (apt-get install time)", file=sys.stderr)
        return 77
    os.makedirs(args.dir, exist_ok=True)
    failed = False
    try:
        for model in args.models:
            for n in (int(x) for x in args.inputs.split(",")):
                cmds, best, input_bytes, bad = run_case(args, model, n)
                print_table(model, n, cmds, best, input_bytes)
                failed |= any(argv is not None and label not in best for label, argv, _ in cmds)
                if bad:
                    print(f"wavg's output differs from numpy's mean in {len(bad)} tensors: {bad[:3]}")
                    failed = True
                if not args.keep:
                    for k in range(1, n + 1):
                        for ext in ("h5", "safetensors", "pt"):
                            p = os.path.join(args.dir, f"{model}-{k}.{ext}")
                            if os.path.exists(p):
                                os.remove(p)
    finally:
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
