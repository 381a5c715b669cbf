#!/usr/bin/env python3
"""Benchmarks `wavg merge --recipe` against mergekit on the same machine, same recipe, same models.

Makes a base and three fine-tunes of a model (default: GPT-2 124M, float32, randomly initialised by transformers)
as Hugging Face folders with the Python given by --python (which must have transformers and mergekit), then runs
each recipe (TIES density 0.5 over three fine-tunes, SLERP t 0.5, task arithmetic) --repeat times through
`wavg merge --recipe` and `mergekit-yaml`, interleaved, keeping the fastest; peak memory is GNU time's maximum
resident set size. mergekit runs on the CPU (--lazy-unpickle, no --cuda), with out_dtype float32.
Usage: recipe_bench.py --wavg build/wavg --python /work/venvs/torch/bin/python [--dir D] [--model gpt2|gpt2-medium]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

MAKE = r"""
import sys, torch, transformers
name, out = sys.argv[1], sys.argv[2]
cfg = {"gpt2": transformers.GPT2Config(),
       "gpt2-medium": transformers.GPT2Config(n_embd=1024, n_layer=24, n_head=16)}[name]
torch.manual_seed(0)
base = transformers.GPT2LMHeadModel(cfg)
base.save_pretrained(f"{out}/base", safe_serialization=True)
for i in range(3):
    torch.manual_seed(i + 1)
    with torch.no_grad():
        for p in base.parameters():
            p.add_(0.01 * torch.randn_like(p))
    base.save_pretrained(f"{out}/ft{i}", safe_serialization=True)
"""

RECIPES = {
    "ties": "models:\n  - model: {d}/ft0\n    parameters: {{weight: 1.0, density: 0.5}}\n"
            "  - model: {d}/ft1\n    parameters: {{weight: 0.7, density: 0.5}}\n"
            "  - model: {d}/ft2\n    parameters: {{weight: 0.5, density: 0.5}}\n"
            "base_model: {d}/base\nmerge_method: ties\ndtype: float32\n",
    "slerp": "models:\n  - model: {d}/ft0\n  - model: {d}/ft1\nbase_model: {d}/ft0\nmerge_method: slerp\n"
             "parameters:\n  t: [0, 0.5, 1]\ndtype: float32\n",
    "task_arithmetic": "models:\n  - model: {d}/ft0\n    parameters: {{weight: 1.0}}\n"
                       "  - model: {d}/ft1\n    parameters: {{weight: -0.5}}\n"
                       "base_model: {d}/base\nmerge_method: task_arithmetic\ndtype: float32\n",
}


def timed(argv):
    with tempfile.NamedTemporaryFile("r") as report:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name, *argv], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
        seconds = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"failed: {' '.join(argv)}: {proc.stderr.decode(errors='replace')[-500:]}")
        return seconds, int(report.read().split()[-1]) / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wavg", required=True)
    ap.add_argument("--python", required=True)
    ap.add_argument("--dir", default=None)
    ap.add_argument("--model", default="gpt2")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--recipes", default="ties,slerp,task_arithmetic")
    args = ap.parse_args()
    d = os.path.abspath(args.dir or tempfile.mkdtemp(prefix="recipe_bench_"))
    if not os.path.exists(f"{d}/ft2/config.json"):
        subprocess.run([args.python, "-c", MAKE, args.model, d], check=True)
    mergekit_yaml = os.path.join(os.path.dirname(args.python), "mergekit-yaml")
    print(f"model {args.model}, dir {d}, load {os.getloadavg()[0]:.1f}, cpus {os.cpu_count()}")
    print("| recipe | wavg s | wavg peak MiB | mergekit s | mergekit peak MiB | speed-up |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in args.recipes.split(","):
        path = f"{d}/{name}.yml"
        open(path, "w").write(RECIPES[name].format(d=d))
        best = {"wavg": None, "mergekit": None}
        for _ in range(args.repeat):
            wavg = [args.wavg, "merge", "-q", "--force", "--recipe", path, "-o", f"{d}/out-wavg/"]
            for tool, argv in (("wavg", wavg),
                               ("mergekit", [mergekit_yaml, path, f"{d}/out-mk", "--lazy-unpickle",
                                             "--allow-crimes"])):
                subprocess.run(["rm", "-rf", f"{d}/out-mk"])
                r = timed(argv)
                if best[tool] is None or r[0] < best[tool][0]:
                    best[tool] = r
        (ws, wm), (ms, mm) = best["wavg"], best["mergekit"]
        print(f"| {name} | {ws:.2f} | {wm:.0f} | {ms:.2f} | {mm:.0f} | {ms / ws:.1f}x |")


if __name__ == "__main__":
    main()
