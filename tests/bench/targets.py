#!/usr/bin/env python3
"""Every target of issue 30 measured side by side in one run, printed as one Markdown table.

    /usr/bin/python3 tests/bench/targets.py [--quick] [--sections codecs,hash,...] [--wavg build/wavg]
        [--dir /tmp/wavg-targets] [--model 124M] [--n16-model 124M] [--repeat 3] [--codecs caffe,...]
        [--dcp-python /work/venvs/torch/bin/python] [--scipy-python /work/venvs/torch/bin/python] [--profile]

Each row is one command against its own floor, measured in the same interleaved rounds (--repeat, the fastest run
counts): the floor is `cat` of every file the command's passes read, then writing a file of the output's size and
`sync` of it (wavg fsyncs its output). Beside the ratio the row prints what bounds it: wall and CPU seconds (user +
system over all threads, from wait4), the MiB the passes read and the MiB written, and two peaks polled from
/proc every 5 ms (caffe_floor.run): the resident set (VmHWM: mapped input pages count) and the anonymous memory
(RssAnon: the process's own, beside the page cache, which the "<= 256 MiB" target is about). The last column says
whether the issue's target is met, or by how much it is missed and what the run shows about why (CPU time near the
wall time: the command computes; far below: it waits for I/O or for a CPU shared with other work).
The load average is printed before and after each section: wall times on a shared machine are only as good as it.

Sections (--sections, default all):
  codecs    every codec's `wavg merge` with default options, N inputs (HDF5, safetensors, .pt zip and legacy .pt
            written by torch, npz by numpy, TensorFlow, MXNet, TF.js, Flax msgpack, HF folder converted by wavg
            from the safetensors, Caffe written by caffe_floor.py, DCP by torch and DeepSpeed ZeRO 2 as
            samples/deepspeed/make_deepspeed.py lays it out when --dcp-python): <= 1.25x, <= 256 MiB
  hash      the default fingerprint (XXH3) beside --hash none, safetensors: <= 1.25x
  robust    median, trimmed mean (<= 2x), Krum, geometric median (<= 2x) at N = 4
  robust16  median, trimmed mean at N = 16 (<= 3x), model --n16-model
  task      TIES, DARE-TIES, DARE-linear over a base, each against one read of the inputs and base: <= 2x
  threads   the plain mean at the default thread count and at -j1: the default never slower
  align     `wavg align` of two 8-layer W-wide MLPs (align_speed.py) at --align-widths beside the numpy/scipy
            reference (--scipy-python): peak RSS <= the reference's, <= 1 GiB at W = 4096 (134M); the time
            exponent between widths is printed (today's: W^2.7)

Inputs are generated deterministically (bench_models.py) under --dir and removed after their section unless
--keep. --profile runs `perf record` on the row that misses its target by the most and prints its top symbols.
Needs numpy and h5py (Debian's /usr/bin/python3 has them, and torch 1.13 for the .pt rows).
"""

import argparse
import glob
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import align_speed  # noqa: E402
import bench  # noqa: E402
import bench_models  # noqa: E402
import caffe_floor  # noqa: E402

SECTIONS = ["codecs", "hash", "robust", "robust16", "task", "threads", "align"]
# Seconds each section took at 124M, N = 4, --repeat 3 (align: widths 512-4096 with the reference), inputs generated
# included, measured on the 2-core VM (AMD EPYC) while others built (load 5.6-8.8): the basis of the printed
# estimate, scaled by model size and rounds; a quiet machine takes less.
ESTIMATE = {"codecs": 510, "hash": 26, "robust": 55, "robust16": 132, "task": 107, "threads": 27, "align": 348}
# Codec rows: label, how input k is made ("gen:KIND" by bench_models, "convert:PATH[:OPTION]" by wavg convert from
# the safetensors input, "caffe" by caffe_floor.py), and the merge's output (relative to the output folder).
CODECS = [("HDF5 (Keras 2)", "gen:h5", "out.h5"),
          ("safetensors", "gen:safetensors", "out.safetensors"),
          (".pt zip (torch.save)", "gen:pt", "out.pt"),
          ("legacy .pt (torch.save, pre-1.6)", "gen:legacy.pt", "out.pt"),
          ("TensorFlow checkpoint", "convert:{}.ckpt-1", "out.ckpt-1"),
          ("Caffe .caffemodel", "caffe", "out.caffemodel"),
          ("MXNet .params", "convert:{}.params", "out.params"),
          ("TF.js model.json", "convert:{}-tfjs/model.json:--format=tfjs", "out-tfjs/model.json"),
          ("NumPy .npz (numpy.savez)", "gen:npz", "out.npz"),
          ("Flax msgpack", "convert:{}.msgpack", "out.msgpack"),
          ("HF folder", "convert:{}-hf/", "out-hf/"),
          ("DCP folder (torch.distributed.checkpoint)", "gen:dcp", "out-dcp/"),
          ("DeepSpeed ZeRO 2 folder, 2 ranks", "gen:deepspeed", "out-ds/")]


def files_of(arg):
    """The files behind one checkpoint argument: a folder's files, a model.json's folder, a file, a prefix's files."""
    if os.path.isdir(arg) or arg.endswith("model.json"):
        folder = arg if os.path.isdir(arg) else os.path.dirname(arg)
        return sorted(os.path.join(d, f) for d, _, fs in os.walk(folder) for f in fs)
    return [arg] if os.path.isfile(arg) else sorted(glob.glob(glob.escape(arg) + ".*"))


def size(paths):
    return sum(os.path.getsize(f) for p in paths for f in files_of(p))


def clear(out, remake=True):
    """Removes an earlier output (a folder, a TensorFlow prefix's files); a TF.js output's folder is made again
    unless not `remake`."""
    target = os.path.dirname(out) if out.endswith("model.json") else out.rstrip("/")
    for p in glob.glob(glob.escape(target) + "*"):
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    if out.endswith("model.json") and remake:
        os.makedirs(target)


def warm(paths):
    """Puts the inputs on disk and in the page cache, as a checkpoint written some time before its merge is: inputs
    written moments before (each codec's, converted just before its rows) would otherwise be flushed by the kernel's
    writeback while the commands run, and the first merges over freshly written pages took three to four times the
    system time of later ones (124M x 4 safetensors: 0.77-0.82 s against 0.21 s)."""
    os.sync()
    for f in (f for p in paths for f in files_of(p)):
        with open(f, "rb") as h:
            while h.read(1 << 26):
                pass


class Group:
    """Commands measured together: floors and the rows set against them, run interleaved --repeat times."""

    def __init__(self, ctx):
        self.ctx, self.cmds, self.rows = ctx, [], []

    def floor(self, reads, out_bytes):
        """Adds the floor of a command that reads `reads` (every pass) and writes `out_bytes`; returns its label."""
        label = f"floor {len(self.cmds)}"
        out = os.path.join(self.ctx.out, "floor.bin")
        files = [f for p in reads for f in files_of(p)]
        argv = ["sh", "-c", f'cat "$@" >/dev/null && head -c {out_bytes} /dev/zero >"$0" && sync "$0"', out, *files]
        self.cmds.append((label, argv, out))
        return label

    def row(self, what, target, argv, out, floor, reads, limit=None, rss_limit=None):
        self.cmds.append((what, argv, out))
        self.rows.append(SimpleNamespace(what=what, target=target, floor=floor, read=size(reads), limit=limit,
                                         rss_limit=rss_limit, argv=argv))

    def run(self, inputs):
        warm(inputs)
        best = {}
        for _ in range(self.ctx.repeat):
            for label, argv, out in self.cmds:
                clear(out)
                r = caffe_floor.run(argv)
                if r and (label not in best or r["wall"] < best[label]["wall"]):
                    best[label] = dict(r, written=size([out]))
                clear(out)
        for row in self.rows:
            row.result, row.floor_result = best.get(row.what), best.get(row.floor)
        return self.rows


def verdict(row):
    """'met', or by how much the row misses its targets and what its own figures say about why."""
    if row.result is None:
        return "failed (see stderr)"
    wall, cpu, anon = row.result["wall"], row.result["cpu"], row.result["anon"]
    misses = []
    if row.limit and not hasattr(row, "ratio"):
        misses.append("no ratio: the floor failed")
    elif row.limit and row.ratio > row.limit:
        misses.append(f"{row.ratio:.2f}x > {row.limit:g}x (+{(row.ratio / row.limit - 1) * 100:.0f} %)")
    if row.rss_limit and anon > row.rss_limit:
        misses.append(f"anonymous RSS {anon:.0f} > {row.rss_limit:.0f} MiB")
    if not misses:
        return "met" if row.limit or row.rss_limit else ""
    floor_cpu = row.floor_result["cpu"] if row.floor_result else 0
    why = (f"CPU-bound: {cpu:.2f} CPU-s in {wall:.2f} s (floor {floor_cpu:.2f})" if cpu >= 0.8 * wall else
           f"waiting: {cpu:.2f} CPU-s in {wall:.2f} s (I/O, or the CPU shared)")
    return "**missed** " + "; ".join(misses) + "; " + why


def finish(rows):
    for row in rows:
        if row.result and row.floor_result and not hasattr(row, "ratio"):
            row.ratio = row.result["wall"] / row.floor_result["wall"]
            row.floor_s = row.floor_result["wall"]
    return rows


def merge_argv(ctx, extra, inputs, out):
    return [ctx.wavg, "merge", "-q", *extra, *inputs, "-o", out]


def make_codec_inputs(ctx, how, n):
    """Returns input 1..n of one codec row, generating what is missing."""
    if how.startswith("gen:"):
        kind = how[4:]
        return bench_models.generate(ctx.dir, ctx.model, n, [kind], sys.executable, ctx.dcp_python)[kind]
    st = bench_models.generate(ctx.dir, ctx.model, n, ["safetensors"])["safetensors"]
    paths = []
    for k, src in enumerate(st, 1):
        stem = os.path.join(ctx.dir, f"{ctx.model}-{k}")
        if how == "caffe":
            path = stem + ".caffemodel"
            if not os.path.exists(path):
                caffe_floor.write_caffemodel(path, ctx.model, k)
        else:
            _, pattern, *option = how.split(":")
            path = pattern.format(stem)
            if not files_of(path):
                if path.endswith("model.json"):
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                opts = [o.replace("=", " ").split() for o in option]
                subprocess.run([ctx.wavg, "convert", "-q", src, "-o", path, *sum(opts, [])], check=True)
        paths.append(path)
    return paths


def section_codecs(ctx):
    rows = []
    for what, how, out in CODECS:
        if ctx.codecs and not any(c.lower() in what.lower() for c in ctx.codecs):
            continue
        needs = {"gen:pt": (sys.executable, "torch"), "gen:legacy.pt": (sys.executable, "torch"),
                 "gen:dcp": (ctx.dcp_python, "torch.distributed.checkpoint"),
                 "gen:deepspeed": (ctx.dcp_python, "deepspeed")}.get(how)
        if needs and not bench.can_import(*needs):
            print(f"targets: {what}: skipped ({needs[0]} cannot import {needs[1]})", file=sys.stderr)
            continue
        ins = make_codec_inputs(ctx, how, ctx.n)
        out = os.path.join(ctx.out, out)
        g = Group(ctx)
        floor = g.floor(ins, size(ins[:1]))
        g.row(f"merge {what}", "<= 1.25x, anon <= 256 MiB", merge_argv(ctx, [], ins, out), out, floor, ins, 1.25, 256)
        rows += finish(g.run(ins))
        if not ctx.keep and how != "gen:safetensors":  # the other sections use the safetensors inputs
            for p in ins:
                clear(p, remake=False)
    return rows


def safetensors_inputs(ctx, n, model=None):
    return bench_models.generate(ctx.dir, model or ctx.model, n, ["safetensors"])["safetensors"]


def section_hash(ctx):
    ins = safetensors_inputs(ctx, ctx.n)
    out = os.path.join(ctx.out, "out.safetensors")
    g = Group(ctx)
    floor = g.floor(ins, size(ins[:1]))
    g.row("mean, default fingerprint (XXH3), safetensors", "<= 1.25x", merge_argv(ctx, [], ins, out), out, floor,
          ins, 1.25)
    g.row("mean, --hash none, safetensors", "(beside the default)", merge_argv(ctx, ["--hash", "none"], ins, out),
          out, floor, ins)
    return finish(g.run(ins))


def method_group(ctx, methods, n, model, limits, base=None):
    """Rows for bench.py's --methods at their usual settings (bench.method_rows), each against its own floor."""
    ins = safetensors_inputs(ctx, n, model)
    out = os.path.join(ctx.out, "out.safetensors")
    args = SimpleNamespace(methods=",".join(methods), dir=ctx.dir)
    g, floors = Group(ctx), {}
    for (label, extra, files), name in zip(bench.method_rows(args, n, ctx.out, ins, base), methods):
        key = tuple(files)
        if key not in floors:
            floors[key] = g.floor(files, size(ins[:1]))
        inputs = [f for f in ins if f in files]
        g.row(f"{label.replace('merge ', '')}, N = {n}" + (f", {model}" if model != ctx.model else ""),
              f"<= {limits[name]:g}x", merge_argv(ctx, extra, inputs, out), out, floors[key], files, limits[name])
    return finish(g.run(ins + ([base] if base else [])))


def section_robust(ctx):
    return method_group(ctx, ["median", "trimmed-mean", "krum", "geometric-median"], ctx.n, ctx.model,
                        {"median": 2, "trimmed-mean": 2, "krum": 2, "geometric-median": 2})


def section_robust16(ctx):
    rows = method_group(ctx, ["median", "trimmed-mean"], 16, ctx.n16_model, {"median": 3, "trimmed-mean": 3})
    if not ctx.keep:
        for k in range(ctx.n + 1 if ctx.n16_model == ctx.model else 1, 17):
            p = os.path.join(ctx.dir, f"{ctx.n16_model}-{k}.safetensors")
            if os.path.exists(p):
                os.remove(p)
    return rows


def section_task(ctx):
    base = os.path.join(ctx.dir, f"{ctx.model}-base.safetensors")
    if not os.path.exists(base):
        bench_models.write_safetensors(base, ctx.model, 0)  # a base of its own: every task vector is non-zero
    return method_group(ctx, ["ties", "dare-ties", "dare-linear"], ctx.n, ctx.model,
                        {"ties": 2, "dare-ties": 2, "dare-linear": 2}, base)


def section_threads(ctx):
    ins = safetensors_inputs(ctx, ctx.n)
    out = os.path.join(ctx.out, "out.safetensors")
    g = Group(ctx)
    floor = g.floor(ins, size(ins[:1]))
    g.row(f"mean, default threads ({os.cpu_count()} cores)", "wall <= -j1's", merge_argv(ctx, [], ins, out), out,
          floor, ins)
    g.row("mean, -j1", "", merge_argv(ctx, ["-j1"], ins, out), out, floor, ins)
    rows = finish(g.run(ins))
    default, one = rows
    if default.result and one.result:
        d, j1 = default.result, one.result
        slower = d["wall"] / j1["wall"]
        default.verdict = ("met" if slower <= 1 else f"**missed** {slower:.2f}x -j1's wall") + \
            f" ({d['wall']:.2f} vs {j1['wall']:.2f} s; CPU {d['cpu']:.2f} vs {j1['cpu']:.2f})"
    return rows


def section_align(ctx):
    """align_speed.py's pair at each width, wavg then the reference, one run each (memory is the target)."""
    rows, layers = [], 8
    for w in ctx.align_widths:
        d = os.path.join(ctx.dir, f"align-{w}")
        names, perms = align_speed.write_pair(d, w, layers, bool(ctx.scipy_python))
        params = layers * (w * w + w)
        ours = caffe_floor.run(align_speed.align_argv(ctx.wavg, d))
        ref = caffe_floor.run(align_speed.reference_argv(ctx.scipy_python, d, layers)) if ctx.scipy_python else None
        big = params >= 130e6
        row = SimpleNamespace(what=f"align W = {w}, 8 layers ({params / 1e6:.0f}M)", width=w, limit=None,
                              read=size([f"{d}/a.h5", f"{d}/b.h5"]), floor_result=ref,
                              target="RSS <= reference's" + (", <= 1 GiB" if big else ""),
                              result=ours and dict(ours, written=size([f"{d}/out.h5"])))
        notes = [] if ours and align_speed.recovered(d, names, perms) else ["a permutation not recovered"]
        if ours and ref:
            row.ratio, row.floor_s = ours["wall"] / ref["wall"], ref["wall"]
            if ours["rss"] > ref["rss"]:
                notes.append(f"RSS {ours['rss']:.0f} > reference's {ref['rss']:.0f} MiB")
        if ours and big and ours["rss"] > 1024:
            notes.append(f"RSS {ours['rss']:.0f} > 1024 MiB")
        row.verdict = ("**missed** " + "; ".join(notes) if notes else "met") if ours else "failed (see stderr)"
        row.verdict += "" if ref else " (no reference: --scipy-python)"
        if ours and rows and rows[-1].result:
            prev = rows[-1]
            exponent = math.log(ours["wall"] / prev.result["wall"]) / math.log(w / prev.width)
            row.verdict += f"; time ~ W^{exponent:.1f} from W = {prev.width}"
        rows.append(row)
        if not ctx.keep:
            shutil.rmtree(d)
    return rows


def machine(ctx):
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 platform.processor())
    mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    repo = os.path.join(HERE, "..", "..")
    git = lambda *a: subprocess.run(["git", "-C", repo, *a], capture_output=True, text=True).stdout.strip()  # noqa
    commit = git("rev-parse", "--short", "HEAD") + (" (modified)" if git("status", "--porcelain", "-uno") else "")
    version = subprocess.run([ctx.wavg, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    return (f"{model}, {os.cpu_count()} cores, {mem / 2**20:.1f} GiB RAM, Linux {platform.release()}, commit "
            f"{commit}, {version}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


def fmt_row(row):
    if row.result is None:
        return f"| {row.what} | {row.target} | n/a | | | | | | {verdict(row)} |"
    wall, rss, cpu, written, anon = (row.result[k] for k in ("wall", "rss", "cpu", "written", "anon"))
    ratio = f"{row.ratio:.2f} ({row.floor_s:.2f} s)" if hasattr(row, "ratio") else ""
    v = getattr(row, "verdict", None) or verdict(row)
    mib = lambda n: f"{n / 2**20:,.0f}" if n >= 10 << 20 else f"{n / 2**20:.1f}"  # noqa: E731
    return f"| {row.what} | {row.target} | {ratio} | {wall:.2f} | {cpu:.2f} | {mib(row.read)} | {mib(written)} | " \
        f"{rss:.0f} / {anon:.0f} | {v} |"


def profile(ctx, rows):
    """perf record of the row that misses its ratio target by the most, of those whose inputs are still on disk
    (--keep keeps every section's); prints its top symbols."""
    on_disk = lambda r: all(os.path.exists(x) for x in r.argv[:-1] if x.startswith(ctx.dir))  # noqa: E731
    missed = [r for r in rows if getattr(r, "ratio", None) and r.limit and r.ratio > r.limit and hasattr(r, "argv")
              and on_disk(r)]
    if not missed or not shutil.which("perf"):
        return
    worst = max(missed, key=lambda r: r.ratio / r.limit)
    data = os.path.join(ctx.out, "perf.data")
    clear(worst.argv[-1])
    rec = subprocess.run(["perf", "record", "-q", "-o", data, "--", *worst.argv], capture_output=True, text=True)
    if rec.returncode != 0:
        print(f"\nperf record failed: {rec.stderr.strip()[-200:]}")
        return
    rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "--sort", "symbol",
                          "--percent-limit", "2"], capture_output=True, text=True).stdout
    print(f"\nProfile of the largest gap, {worst.what} ({worst.ratio:.2f}x, target {worst.limit:g}x):\n")
    for line in rep.splitlines():
        if line.strip() and not line.startswith("#"):
            print("    " + re.sub(r"\s+-\s+-\s*$", "", line).strip()[:116])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny models, one round, align at W = 64, 128: a smoke test")
    ap.add_argument("--sections", default=",".join(SECTIONS), help="comma list of %(default)s")
    ap.add_argument("--wavg", default=os.path.join(HERE, "..", "..", "build", "wavg"))
    ap.add_argument("--dir", default="/tmp/wavg-targets", help="inputs and outputs (default %(default)s)")
    ap.add_argument("--model", choices=sorted(bench_models.MODELS), help="default 124M (--quick: tiny)")
    ap.add_argument("--n16-model", choices=sorted(bench_models.MODELS),
                    help="the N = 16 rows' model (default: --model)")
    ap.add_argument("--codecs", help="comma list: only the codec rows whose name contains one (caffe,deepspeed)")
    ap.add_argument("--inputs", type=int, default=4, help="N of every row but robust16 (default %(default)s)")
    ap.add_argument("--repeat", type=int, help="interleaved rounds; the fastest counts (default 3, --quick: 1)")
    ap.add_argument("--align-widths", help="default 512,1024,2048,4096 (--quick: 64,128)")
    ap.add_argument("--dcp-python", help="a python with torch >= 2.2 (DCP row) and deepspeed (its row), e.g. "
                    "/work/venvs/torch/bin/python")
    ap.add_argument("--scipy-python", help="a python with numpy and scipy (align's reference)")
    ap.add_argument("--profile", action="store_true", help="perf record the row that misses by the most")
    ap.add_argument("--keep", action="store_true", help="keep the generated inputs")
    a = ap.parse_args()
    a.model = a.model or ("tiny" if a.quick else "124M")
    a.n16_model = a.n16_model or a.model
    a.repeat = a.repeat or (1 if a.quick else 3)
    a.align_widths = a.align_widths or ("64,128" if a.quick else "512,1024,2048,4096")
    sections = a.sections.split(",")
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        sys.exit(f"targets: unknown section {unknown}")
    # Each binary runs with the OpenMP wait policy it chooses itself.
    for v in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS"):
        os.environ.pop(v, None)
    ctx = SimpleNamespace(wavg=os.path.abspath(a.wavg), dir=a.dir, out=os.path.join(a.dir, "out"), model=a.model,
                          n16_model=a.n16_model, n=a.inputs, codecs=a.codecs and a.codecs.split(","), repeat=a.repeat,
                          keep=a.keep, dcp_python=a.dcp_python, scipy_python=a.scipy_python,
                          align_widths=[int(w) for w in a.align_widths.split(",")])
    os.makedirs(ctx.out, exist_ok=True)
    scale = bench_models.parameters(a.model) / bench_models.parameters("124M") * a.repeat / 3
    aligned = sum(w ** 2.7 for w in ctx.align_widths) / sum(w ** 2.7 for w in (512, 1024, 2048, 4096))
    guess = sum(ESTIMATE[s] * (aligned if s == "align" else scale) for s in sections)
    print(f"targets: sections {','.join(sections)}; at most about {guess / 60:.1f} min on a 2-core VM",
          file=sys.stderr, flush=True)
    lines, every, t0 = [], [], time.time()
    for s in sections:
        before, start = os.getloadavg()[0], time.time()
        print(f"targets: {s} ...", file=sys.stderr, flush=True)
        rows = globals()[f"section_{s}"](ctx)
        every += rows
        lines.append(f"| **{s}** (load {before:.2f} -> {os.getloadavg()[0]:.2f}, {time.time() - start:.0f} s) "
                     "| | | | | | | | |")
        lines += [fmt_row(r) for r in rows]
    print(f"\nMachine: {machine(ctx)}. Model {a.model} ({bench_models.parameters(a.model):,} float32 values), "
          f"N = {a.inputs}, fastest of {a.repeat} interleaved rounds, inputs in the page cache; "
          f"{time.time() - t0:.0f} s in all.\n")
    print("| what | target | x floor (floor s) | wall s | CPU s | MiB read | MiB written | peak RSS / anon MiB "
          "| verdict |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    print("\n".join(lines))
    if a.profile:
        profile(ctx, every)
    if not a.keep:
        shutil.rmtree(a.dir, ignore_errors=True)
    return 1 if any(r.result is None for r in every) else 0


if __name__ == "__main__":
    sys.exit(main())
