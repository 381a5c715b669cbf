#!/usr/bin/env python3
"""A Caffe `.caffemodel` merge against its own I/O floor, two wavg builds side by side (issue 30's Caffe row).

    tests/bench/caffe_floor.py --base OLD/wavg --new build/wavg [--model 124M] [--inputs 4] [--rounds 3] [--dir D]
                               [--check]

Writes --inputs .caffemodel files of a bench_models.py model (GPT-2 small by default: 98 blobs, 124M float32
values), the NetParameter's wire bytes assembled here (current layout: one layer per weight/bias pair with its
name, type, bottom and top, each blob a BlobShape and one packed data field), reads them once into the page cache,
then runs, interleaved for --rounds rounds (fastest kept): the floor (cat every input to /dev/null, write an output
of the merge's size, sync it), `wavg merge` with default options for each build (wavg fsyncs its output), and, for
reference, the new build on the same values in safetensors (the engine's own cost, without the Caffe codec).
Each row gives wall and CPU seconds, page faults, peak RSS (VmHWM: it counts the input pages a build maps) and peak
anonymous RSS (RssAnon, polled every 5 ms: the memory that is the process's own, beside the page cache), with
`uptime`'s load: on a shared machine the counts and memory are the figures to trust, the times less so.
--check compares the new build's output with numpy's mean, read back by python3-protobuf.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import bench_models  # noqa: E402
import caffe_tools as ct  # noqa: E402
from caffe_tools import field, varint  # noqa: E402


def layers(model, seed):
    """Yields (layer name, type, [float32 arrays]) in file order: bench_models' tensors grouped by layer."""
    name, arrays = None, []
    for full, a in bench_models.tensors(model, seed):
        layer = full.split("/")[0]
        if layer != name and arrays:
            yield name, ("Embed" if len(arrays) == 1 else "InnerProduct"), arrays
            arrays = []
        name = layer
        arrays.append(a)
    yield name, ("Embed" if len(arrays) == 1 else "InnerProduct"), arrays


def write_caffemodel(path, model, seed):
    with open(path, "wb") as f:
        f.write(field(1, b"bench"))
        for name, kind, arrays in layers(model, seed):
            blobs = []
            for a in arrays:
                shape = field(7, field(1, b"".join(varint(d) for d in a.shape)))
                data = a.astype("<f4").tobytes()
                blobs.append(varint(7 << 3 | 2) + varint(len(shape) + len(varint(len(data))) + 1 + len(data)) +
                             shape + varint(5 << 3 | 2) + varint(len(data)))
                blobs.append(data)
            head = field(1, name.encode()) + field(2, kind.encode()) + field(3, b"x") + field(4, name.encode())
            f.write(varint(100 << 3 | 2) + varint(len(head) + sum(len(b) for b in blobs)) + head)
            for b in blobs:
                f.write(b)


def peaks(pid, result, stop):
    """Polls the process's peak RSS (VmHWM) and anonymous RSS until `stop`; appends both, in MiB."""
    hwm = anon = 0
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as s:
                for line in s:
                    if line.startswith("VmHWM:"):
                        hwm = max(hwm, int(line.split()[1]))
                    elif line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError):
            break
        time.sleep(0.005)
    result += [hwm / 1024, anon / 1024]


def run(argv):
    """Runs argv; returns its costs, or None when it fails. Memory is polled from /proc (wait4()'s peak would count
    this interpreter's memory, inherited until the exec; a zombie's status no longer shows it)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    mem, stop = [], threading.Event()
    poll = threading.Thread(target=peaks, args=(proc.pid, mem, stop))
    poll.start()
    t0 = time.perf_counter()
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    wall = time.perf_counter() - t0
    stop.set()
    poll.join()
    _, status, ru = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"  failed: {' '.join(argv[:3])} ...: {err.strip()[-300:]}", file=sys.stderr)
        return None
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "faults": ru.ru_minflt + ru.ru_majflt, "rss": mem[0],
            "anon": mem[1], "load": os.getloadavg()[0]}


def check(out, ins):
    got = ct.tensors(ct.load(out))
    loaded = [ct.tensors(ct.load(p)) for p in ins]
    bad = [n for n, v in got.items()
           if v.tobytes() != (sum(d[n].astype(np.float64) for d in loaded) / len(loaded)).astype(np.float32).tobytes()]
    print(f"# check: {len(got)} blobs read back by python3-protobuf, {len(bad)} differ from numpy's mean {bad[:3]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the wavg binary before the change")
    ap.add_argument("--new", required=True, help="the wavg binary after it")
    ap.add_argument("--model", default="124M", choices=sorted(bench_models.MODELS))
    ap.add_argument("--inputs", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--dir", help="where to put the inputs (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        ins = [f"{d}/in{k}.caffemodel" for k in range(1, args.inputs + 1)]
        for k, p in enumerate(ins, 1):
            write_caffemodel(p, args.model, k)
        st = bench_models.generate(d, args.model, args.inputs, ["safetensors"])["safetensors"]
        size = os.path.getsize(ins[0])
        for p in ins + st:  # into the page cache
            with open(p, "rb") as f:
                while f.read(1 << 26):
                    pass
        out = f"{d}/out.caffemodel"
        floor = ["sh", "-c", f'cat "$@" >/dev/null && head -c {size} /dev/zero >"$0" && sync "$0"', out, *ins]
        cmds = [("floor", floor, out)] + [(b, [w, "merge", "-q", "--force", *ins, "-o", out], out)
                                           for b, w in (("base", args.base), ("new", args.new))]
        out_st = f"{d}/out.safetensors"
        cmds.append(("new on safetensors", [args.new, "merge", "-q", "--force", *st, "-o", out_st], out_st))
        best = {}
        for _ in range(args.rounds):
            for label, argv, written in cmds:
                if os.path.exists(written):
                    os.remove(written)
                r = run(argv)
                if r and (label not in best or r["wall"] < best[label]["wall"]):
                    best[label] = r
        print(f"# {args.inputs} inputs x {bench_models.parameters(args.model):,} float32 values ({size / 2**20:.0f} "
              f"MiB each), default options, fastest of {args.rounds} interleaved rounds; {os.uname().nodename}, "
              f"{os.cpu_count()} CPUs")
        print(f"{'run':18} {'wall s':>7} {'x floor':>7} {'cpu s':>6} {'faults':>8} {'peak RSS MiB':>12} "
              f"{'peak anon MiB':>13} {'load':>5}")
        for label, r in best.items():
            ratio = r["wall"] / best["floor"]["wall"] if "floor" in best else float("nan")
            print(f"{label:18} {r['wall']:7.2f} {ratio:7.2f} {r['cpu']:6.2f} {r['faults']:8d} {r['rss']:12.0f} "
                  f"{r['anon']:13.0f} {r['load']:5.1f}")
        if args.check:
            subprocess.run([args.new, "merge", "-q", "--force", *ins, "-o", out], check=True)
            check(out, ins)


if __name__ == "__main__":
    main()
