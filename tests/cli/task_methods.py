#!/usr/bin/python3
"""Checks wavg merge's task-vector methods against numpy implementations of mergekit's formulas, written here:
three float64 fine-tunes of one base, every method, agreement to 1e-12 relative. DARE's drop mask is Philox4x32-10
(Salmon et al., SC 2011) keyed as wavg-merge(1) says, computed here with numpy's uint64 arithmetic. Usage:
task_methods.py WAVG (run in an empty directory)."""
import subprocess
import sys

import h5py
import numpy as np

import mergekit_ref as ref

WAVG = sys.argv[1]
rng = np.random.default_rng(19)
SHAPES = {"dense/kernel": (40, 30), "dense/bias": (30,), "out/kernel": (30, 7)}
base = {k: rng.normal(size=s) for k, s in SHAPES.items()}
tunes = [{k: v + rng.normal(scale=0.1, size=v.shape) for k, v in base.items()} for _ in range(3)]


def write(path, tensors):
    with h5py.File(path, "w") as f:
        for k, v in tensors.items():
            f[k] = v


def read(path):
    with h5py.File(path, "r") as f:
        return {k: f[k][()] for k in SHAPES}


write("base.h5", base)
for i, t in enumerate(tunes):
    write(f"x{i}.h5", t)
INPUTS = ["x0.h5", "x1.h5", "x2.h5"]


def merge(out, *args, inputs=INPUTS):
    subprocess.run([WAVG, "merge", "-q", *inputs, "-o", out, *args], check=True)
    return read(out)


def close(name, got, want, floor=1e-300):
    """got equals want to 1e-12 relative (relative to floor where |want| is below it)."""
    for k in SHAPES:
        err = np.max(np.abs(got[k] - want[k]) / np.maximum(np.abs(want[k]), floor))
        assert err <= 1e-12, (name, k, err)
    print(name, "ok")


# --- the generalized task arithmetic of mergekit ---------------------------------------------------------------
def gta(weights, lam, sparsify, consensus, normalize):  # plan order is the inputs' tensor order, as h5py lists them
    return {k: ref.gta(base[k], [x[k] for x in tunes], weights, lam, lambda tv, i: sparsify(tv, t, i), consensus,
                       normalize) for t, k in enumerate(SHAPES)}


ORDER = list(SHAPES)
with h5py.File("x0.h5", "r") as f:
    names = []
    f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
assert sorted(names) == sorted(ORDER)
SHAPES = {k: SHAPES[k] for k in names}  # wavg's plan follows input 1's order

none = lambda tv, t, i: tv
close("task-arithmetic", merge("ta.h5", "--base", "base.h5", "--method", "task-arithmetic", "-w", "1,0.5,2",
                               "--lambda", "0.7"), gta([1, 0.5, 2], 0.7, none, False, False))
close("ties", merge("ties.h5", "--base", "base.h5", "--method", "ties", "--density", "0.3", "-w", "1,2,1.5",
                    "--lambda", "1.2"),
      gta([1, 2, 1.5], 1.2, lambda tv, t, i: ref.magnitude(tv, 0.3), True, True))
close("dare-linear", merge("dl.h5", "--base", "base.h5", "--method", "dare-linear", "--density", "0.6",
                           "--seed", "42", "-w", "0.5,0.3,0.2"),
      gta([0.5, 0.3, 0.2], 1, lambda tv, t, i: ref.dare(tv, 0.6, 42, t, i), False, False))
close("dare-ties", merge("dt.h5", "--base", "base.h5", "--method", "dare-ties", "--density", "0.4", "--seed",
                         "7", "--lambda", "0.9"),
      gta([1, 1, 1], 0.9, lambda tv, t, i: ref.dare(tv, 0.4, 7, t, i), True, False))
for rescale in ("inverse-density", "none"):
    close(f"dare-ties --rescale {rescale}",
          merge(f"dr-{rescale}.h5", "--base", "base.h5", "--method", "dare-ties", "--density", "0.4", "--seed", "7",
                "--rescale", rescale), gta([1, 1, 1], 1, lambda tv, t, i: ref.dare(tv, 0.4, 7, t, i, rescale), True,
                                           False))
close("task-arithmetic negative weights --normalize",
      merge("neg.h5", "--base", "base.h5", "--method", "task-arithmetic", "-w", "1,-0.5,0.25", "--normalize"),
      gta([1, -0.5, 0.25], 1, none, False, True))
close("ties --no-normalize", merge("tn.h5", "--base", "base.h5", "--method", "ties", "--density", "0.5",
                                   "--no-normalize"),
      gta([1, 1, 1], 1, lambda tv, t, i: ref.magnitude(tv, 0.5), True, False))
close("breadcrumbs", merge("bc.h5", "--base", "base.h5", "--method", "breadcrumbs", "--density", "0.3", "--gamma",
                           "0.1", "-w", "1,2,1.5", "--lambda", "1.2"),
      gta([1, 2, 1.5], 1.2, lambda tv, t, i: ref.breadcrumbs(tv, 0.3, 0.1), False, False))
close("breadcrumbs default gamma, density + gamma > 1", merge("bc2.h5", "--base", "base.h5", "--method",
                                                              "breadcrumbs", "--density", "0.995"),
      gta([1, 1, 1], 1, lambda tv, t, i: ref.breadcrumbs(tv, 0.995, 0.01), False, False))
close("breadcrumbs-ties", merge("bt.h5", "--base", "base.h5", "--method", "breadcrumbs-ties", "--density", "0.6",
                                "--gamma", "0.05", "-w", "1,0.5,2"),
      gta([1, 0.5, 2], 1, lambda tv, t, i: ref.breadcrumbs(tv, 0.6, 0.05), True, False))
close("breadcrumbs-ties --normalize", merge("btn.h5", "--base", "base.h5", "--method", "breadcrumbs-ties",
                                            "--density", "0.5", "--gamma", "0.2", "--normalize"),
      gta([1, 1, 1], 1, lambda tv, t, i: ref.breadcrumbs(tv, 0.5, 0.2), True, True))

close("della", merge("de.h5", "--base", "base.h5", "--method", "della", "--density", "0.5", "--epsilon", "0.2",
                     "--seed", "3", "-w", "1,0.5,2", "--lambda", "1.1"),
      gta([1, 0.5, 2], 1.1, lambda tv, t, i: ref.della(tv, 0.5, 0.2, 3, t, i), True, True))
close("della-linear", merge("dli.h5", "--base", "base.h5", "--method", "della-linear", "--density", "0.6",
                            "--epsilon", "0.35", "--seed", "9", "-w", "0.5,0.3,0.2"),
      gta([0.5, 0.3, 0.2], 1, lambda tv, t, i: ref.della(tv, 0.6, 0.35, 9, t, i), False, False))
close("della --rescale none --no-normalize default epsilon",
      merge("den.h5", "--base", "base.h5", "--method", "della", "--density", "0.3", "--seed", "11", "--rescale",
            "none", "--no-normalize"),
      gta([1, 1, 1], 1, lambda tv, t, i: ref.della(tv, 0.3, 0.15, 11, t, i, "none"), True, False))
close("della-linear --epsilon 0 keeps DARE's mask", merge("de0.h5", "--base", "base.h5", "--method", "della-linear",
                                                           "--density", "0.6", "--epsilon", "0", "--seed", "42",
                                                           "-w", "0.5,0.3,0.2"),
      gta([0.5, 0.3, 0.2], 1, lambda tv, t, i: ref.dare(tv, 0.6, 42, t, i), False, False))
close("della --density 1 keeps the task vectors whole", merge("de1.h5", "--base", "base.h5", "--method", "della",
                                                              "--density", "1", "--seed", "1"),
      gta([1, 1, 1], 1, none, True, True))


# --- SLERP (mergekit's slerp) ------------------------------------------------------------------------------
slerp = ref.slerp
for t in (0.0, 0.35, 1.0):
    close(f"slerp t={t}", merge(f"s{t}.h5", "--method", "slerp", "--t", str(t), inputs=["x0.h5", "x1.h5"]),
          {k: slerp(t, tunes[0][k], tunes[1][k]) for k in SHAPES})
got = read("s0.0.h5")
assert all(np.array_equal(got[k], tunes[0][k]) for k in SHAPES), "slerp --t 0 is not input 1"
# Nearly parallel tensors take the linear branch.
write("near.h5", {k: 2 * v + 1e-9 for k, v in tunes[0].items()})
close("slerp parallel", merge("sp.h5", "--method", "slerp", "--t", "0.25", inputs=["x0.h5", "near.h5"]),
      {k: 0.75 * tunes[0][k] + 0.25 * (2 * tunes[0][k] + 1e-9) for k in SHAPES})


# --- model stock (mergekit's compute_t on flattened tensors) ----------------------------------------------------
model_stock = ref.model_stock

# Fine-tunes that share a direction, so the cosines are clearly positive.
shared = {k: rng.normal(scale=0.1, size=v.shape) for k, v in base.items()}
stock = [{k: base[k] + shared[k] + rng.normal(scale=0.05, size=v.shape) for k, v in base.items()} for _ in range(3)]
for i, s in enumerate(stock):
    write(f"m{i}.h5", s)
close("model-stock", merge("ms.h5", "--base", "base.h5", "--method", "model-stock",
                           inputs=["m0.h5", "m1.h5", "m2.h5"]),
      {k: model_stock([s[k] for s in stock], base[k]) for k in SHAPES})

# --- DARE: the same bytes for 1 and 2 threads, and the fraction kept is D within 3 sigma ---------------------------
n, d = 200_000, 0.3
write("big_base.h5", {"w": np.zeros(n)})
write("big.h5", {"w": np.ones(n)})
SHAPES = {"w": (n,)}
one = merge("j1.h5", "--base", "big_base.h5", "--method", "dare-linear", "--density", str(d), "--seed", "5", "-j",
            "1", "--rescale", "inverse-density", inputs=["big.h5"])["w"]
two = merge("j2.h5", "--base", "big_base.h5", "--method", "dare-linear", "--density", str(d), "--seed", "5", "-j",
            "2", "--rescale", "inverse-density", inputs=["big.h5"])["w"]
assert one.tobytes() == two.tobytes(), "DARE differs between 1 and 2 threads"
kept = np.count_nonzero(one)
assert abs(kept - d * n) <= 3 * np.sqrt(n * d * (1 - d)), kept
assert np.all((one == 0) | (one == 1 / d))
print("dare threads and fraction ok")
# --- della: ranks along dimension 1 of a 4-D tensor, rows of one entry, a tensor big enough for threads ---------
SHAPES = {"conv": (6, 40, 3, 3), "col": (50, 1), "big": (300, 700)}
dbase = {k: rng.normal(size=s) for k, s in SHAPES.items()}
dtunes = [{k: v + rng.normal(scale=0.1, size=v.shape) for k, v in dbase.items()} for _ in range(2)]
write("dbase.h5", dbase)
for i, t in enumerate(dtunes):
    write(f"d{i}.h5", t)
with h5py.File("d0.h5", "r") as f:
    names = list(f.keys())
SHAPES = {k: SHAPES[k] for k in names}
run = subprocess.run([WAVG, "merge", "-v", "d0.h5", "d1.h5", "--base", "dbase.h5", "--method", "della-linear",
                      "--density", "0.4", "--epsilon", "0.3", "--seed", "8", "-j", "1", "-o", "dj1.h5"],
                     check=True, capture_output=True, text=True)
assert "della: col: rows of one entry have no rank" in run.stderr, run.stderr
assert "della: 1 tensor(s) with rows of one entry" in run.stdout, run.stdout
one = read("dj1.h5")
two = merge("dj2.h5", "--base", "dbase.h5", "--method", "della-linear", "--density", "0.4", "--epsilon", "0.3",
            "--seed", "8", "-j", "2", inputs=["d0.h5", "d1.h5"])
assert all(one[k].tobytes() == two[k].tobytes() for k in SHAPES), "della differs between 1 and 2 threads"
close("della-linear rows along dimension 1", one,
      {k: ref.gta(dbase[k], [x[k] for x in dtunes], [1, 1], 1, lambda tv, i: ref.della(tv, 0.4, 0.3, 8, t, i),
                  False, False) for t, k in enumerate(SHAPES)}, floor=1.0)  # the L1 sums of 210000 values

# --- the guards: model stock at its pole and under the 1e-6 norm floor, TIES on a tensor smaller than 1/density ---
SHAPES = {"dense/kernel": (40, 30), "dense/bias": (30,)}
d = {k: rng.normal(scale=0.1, size=s) for k, s in SHAPES.items()}
write("opp0.h5", {k: base[k] + d[k] for k in SHAPES})
write("opp1.h5", {k: base[k] - d[k] for k in SHAPES})
run = subprocess.run([WAVG, "merge", "-v", "opp0.h5", "opp1.h5", "--base", "base.h5", "--method", "model-stock",
                      "-o", "pole.h5"], check=True, capture_output=True, text=True)
got = read("pole.h5")
assert all(np.array_equal(got[k], base[k]) for k in SHAPES), "model stock at the pole is not the base"
assert "model stock: dense/kernel: mean cosine -1 is at the pole" in run.stderr, run.stderr
assert "2 tensor(s) kept the base" in run.stdout, run.stdout
print("model-stock pole keeps the base ok")
tiny = [{k: base[k] + rng.normal(scale=3e-6, size=s) for k, s in SHAPES.items()} for _ in range(2)]
for i, s in enumerate(tiny):
    write(f"tiny{i}.h5", s)
close("model-stock norm floor 1e-6", merge("floor.h5", "--base", "base.h5", "--method", "model-stock",
                                           inputs=["tiny0.h5", "tiny1.h5"]),
      {k: ref.model_stock([s[k] for s in tiny], base[k]) for k in SHAPES})
SHAPES = {"b": (3,)}
write("b0.h5", {"b": np.zeros(3)})
write("b1.h5", {"b": np.array([0.5, -2.0, 1.0])})
write("b2.h5", {"b": np.array([0.25, 1.0, -3.0])})
run = subprocess.run([WAVG, "merge", "-v", "b1.h5", "b2.h5", "--base", "b0.h5", "--method", "ties", "--density",
                      "0.2", "-o", "small.h5"], check=True, capture_output=True, text=True)
want = ref.gta(np.zeros(3), [np.array([0.5, -2.0, 1.0]), np.array([0.25, 1.0, -3.0])], [1, 1], 1,
               lambda tv, i: ref.magnitude(tv, 0.2), True, True)
assert np.array_equal(read("small.h5")["b"], want), (read("small.h5")["b"], want)
assert "ties: b: density x 3 values is less than one; kept the largest entry" in run.stderr, run.stderr
print("ties keeps one entry of a tensor smaller than 1/density ok")
run = subprocess.run([WAVG, "merge", "-v", "b1.h5", "b2.h5", "--base", "b0.h5", "--method", "breadcrumbs",
                      "--density", "0.2", "-o", "crumbs.h5"], check=True, capture_output=True, text=True)
assert np.array_equal(read("crumbs.h5")["b"], np.zeros(3)), read("crumbs.h5")["b"]
assert "breadcrumbs: b: density x 3 values is less than one; kept no entry" in run.stderr, run.stderr
assert "breadcrumbs: 1 tensor(s) too small for the density kept no entry" in run.stdout, run.stdout
print("breadcrumbs keeps nothing of a tensor smaller than 1/density, as mergekit, and says so ok")
