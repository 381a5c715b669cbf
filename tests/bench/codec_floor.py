#!/usr/bin/env python3
"""Side-by-side costs of two wavg builds on the codecs issue 30 names: what bounds each merge, not only its time.

    tests/bench/codec_floor.py --base OLD/wavg --new build/wavg [--mib 128] [--inputs 4] [--rounds 3] [--dir D]
                               [--callgrind-mib 8]

Generates --inputs PyTorch checkpoints with torch (Debian's python3, torch 1.13) of --mib MiB of float32 each, in
the zip format and the legacy (pre-1.6) one, converts the zip ones to TensorFlow checkpoints with --new, and merges
each set with both builds, interleaved for --rounds rounds (fastest kept). For each run it prints wall seconds, CPU
seconds (user + system), bytes read and written through system calls (/proc/PID/io rchar and wchar: the inputs come
through a mapping and count as page faults instead, so reading an output back shows here), page faults and peak
RSS, with `uptime`'s load beside it: on a shared machine the counts are the figures to trust, the times are not.
With --callgrind-mib it also counts instructions (valgrind --tool=callgrind, -j1) on inputs of that size, which
the machine's load does not change. Last it times CRC-32C alone: the three-stream path against one stream
(--crc32c-bench, a helper built beside the tests).
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile

MAKE = r"""
import sys, torch
n_inputs, mib, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rows = max(1, mib * 2**20 // 4 // 4 // 1024)
for i in range(n_inputs):
    g = torch.Generator().manual_seed(i)
    sd = {f"layer{k}.weight": torch.randn(rows, 1024, generator=g) for k in range(4)}
    sd["layer0.bias"] = torch.randn(1024, generator=g)
    torch.save(sd, f"{out}/zip{i}.pt")
    torch.save(sd, f"{out}/legacy{i}.pt", _use_new_zipfile_serialization=False)
"""


def load():
    return os.getloadavg()[0]


def run(argv):
    """Runs argv; returns a dict of what it cost (None when it fails)."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t0 = os.times().elapsed
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not reaped: its /proc/PID/io is still there
    wall = os.times().elapsed - t0
    io = dict(line.split(": ") for line in open(f"/proc/{proc.pid}/io").read().split("\n") if line)
    _, status, ru = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        print(f"  failed ({proc.returncode}): {' '.join(argv)}: {err.strip()[-300:]}", file=sys.stderr)
        return None
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "sys": ru.ru_stime, "rss": ru.ru_maxrss / 1024,
            "read": int(io["rchar"]), "written": int(io["wchar"]), "faults": ru.ru_minflt + ru.ru_majflt,
            "load": load()}


def clear(out):
    """Removes an earlier output (a TensorFlow prefix's files too): --force does not replace a checkpoint's .data."""
    for path in glob.glob(glob.escape(out) + "*"):
        os.remove(path)


def callgrind_ir(argv):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        proc = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                              capture_output=True)
        if proc.returncode != 0:
            return None
        for line in open(out):
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    return None


def mib(n):
    return f"{n / 2**20:8.1f}"


def cases(d, n):
    def merge(kind, ext):
        return kind, [f"{d}/{kind}{i}.{ext}" for i in range(n)], f"{d}/out-{kind}.{ext}"
    return [merge("zip", "pt"), merge("legacy", "pt"), merge("tf", "ckpt")]


def make_inputs(args, d, n, size):
    subprocess.run(["/usr/bin/python3", "-c", MAKE, str(n), str(size), d], check=True)
    for i in range(n):
        subprocess.run([args.new, "convert", "-q", f"{d}/zip{i}.pt", "-o", f"{d}/tf{i}.ckpt"], check=True)
    for name in os.listdir(d):  # into the page cache
        with open(os.path.join(d, name), "rb") as f:
            while f.read(1 << 24):
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", required=True, help="the wavg binary before the change")
    ap.add_argument("--new", required=True, help="the wavg binary after it")
    ap.add_argument("--mib", type=int, default=128, help="MiB of float32 per input")
    ap.add_argument("--inputs", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", default="1", help="wavg -j")
    ap.add_argument("--callgrind-mib", type=int, default=0, help="also count instructions on inputs this large")
    ap.add_argument("--crc32c-bench", help="the wavg_crc32c_bench helper")
    ap.add_argument("--dir", help="where to put the inputs (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        make_inputs(args, d, args.inputs, args.mib)
        print(f"# {args.inputs} inputs x {args.mib} MiB float32, -j{args.threads}, fastest of {args.rounds} "
              f"interleaved rounds; {os.uname().nodename}, {os.cpu_count()} CPUs")
        print(f"{'case':8} {'build':5} {'wall s':>7} {'cpu s':>6} {'sys s':>6} {'read MiB':>8} {'wrote MiB':>9} "
              f"{'faults':>8} {'RSS MiB':>7} {'load':>5}")
        for kind, ins, out in cases(d, args.inputs):
            best = {}
            for _ in range(args.rounds):
                for build, wavg in (("base", args.base), ("new", args.new)):
                    clear(out)
                    r = run([wavg, "merge", "-q", "--force", f"-j{args.threads}", *ins, "-o", out])
                    if r and (build not in best or r["cpu"] < best[build]["cpu"]):
                        best[build] = r
            for build, r in best.items():
                print(f"{kind:8} {build:5} {r['wall']:7.2f} {r['cpu']:6.2f} {r['sys']:6.2f} {mib(r['read'])} "
                      f"{mib(r['written']):>9} {r['faults']:8d} {r['rss']:7.0f} {r['load']:5.1f}")
    if args.callgrind_mib:
        with tempfile.TemporaryDirectory(dir=args.dir) as d:
            make_inputs(args, d, args.inputs, args.callgrind_mib)
            print(f"# instructions (callgrind, -j1), {args.inputs} inputs x {args.callgrind_mib} MiB")
            for kind, ins, out in cases(d, args.inputs):
                irs = []
                for w in (args.base, args.new):
                    clear(out)
                    irs.append(callgrind_ir([w, "merge", "-q", "--force", "-j1", *ins, "-o", out]))
                ratio = f"{irs[1] / irs[0]:.3f}" if all(irs) else "n/a"
                print(f"{kind:8} base {irs[0]}  new {irs[1]}  new/base {ratio}")
    if args.crc32c_bench:
        print(f"# CRC-32C alone (load {load():.1f})")
        sys.stdout.flush()
        subprocess.run([args.crc32c_bench], check=True)


if __name__ == "__main__":
    main()
