#!/usr/bin/python3
"""Checks wavg merge's nuslerp, multislerp and karcher against the numpy implementations of mergekit 0.1.5's
formulas in mergekit_ref.py (not wavg's output): float64 inputs, agreement to 1e-12 relative.
Usage: merge_new_methods.py WAVG (run in an empty directory)."""
import subprocess
import sys

import numpy as np

import mergekit_ref as ref

WAVG = sys.argv[1]
rng = np.random.default_rng(28)
SHAPES = {"dense/kernel": (40, 30), "dense/bias": (30,), "out/kernel": (30, 7)}
base = {k: rng.normal(size=s) for k, s in SHAPES.items()}
tunes = [{k: v + rng.normal(scale=0.1, size=v.shape) for k, v in base.items()} for _ in range(3)]


write, read = ref.write_h5, ref.read_h5
write("base.h5", base)
for i, t in enumerate(tunes):
    write(f"x{i}.h5", t)


def merge(out, *args, inputs=("x0.h5", "x1.h5")):
    subprocess.run([WAVG, "merge", "-q", *inputs, "-o", out, *args], check=True)
    return read(out)


def close(name, got, want):
    assert sorted(got) == sorted(want) == sorted(SHAPES), (name, sorted(got))
    ref.agree(name, got, want, 1e-12)


# --- nuslerp (flattened: one angle per tensor) -----------------------------------------------------------------
for w in ((1, 1), (0.3, 0.9), (2, -2)):  # the last sums to zero: t = 0.5
    ws = f"{w[0]},{w[1]}"
    close(f"nuslerp -w {ws}", merge(f"nu{ws}.h5", "--method", "nuslerp", "-w", ws),
          {k: ref.nuslerp(w, tunes[0][k], tunes[1][k]) for k in SHAPES})
    close(f"nuslerp -w {ws} --base", merge(f"nub{ws}.h5", "--method", "nuslerp", "-w", ws, "--base", "base.h5"),
          {k: ref.nuslerp(w, tunes[0][k], tunes[1][k], base[k]) for k in SHAPES})
write("para.h5", {k: 3 * v for k, v in tunes[0].items()})  # colinear: the linear branch
close("nuslerp colinear", merge("nup.h5", "--method", "nuslerp", "-w", "1,3", inputs=("x0.h5", "para.h5")),
      {k: 0.25 * tunes[0][k] + 0.75 * 3 * tunes[0][k] for k in SHAPES})


# --- multislerp ------------------------------------------------------------------------------------------------
X = ("x0.h5", "x1.h5", "x2.h5")
close("multislerp", merge("ms.h5", "--method", "multislerp", "-w", "1,2,0.5", inputs=X),
      {k: ref.multislerp([1, 2, 0.5], [t[k] for t in tunes]) for k in SHAPES})
close("multislerp --base", merge("msb.h5", "--method", "multislerp", "-w", "0.2,0.3,0.5", "--base", "base.h5",
                                 inputs=X),
      {k: ref.multislerp([0.2, 0.3, 0.5], [t[k] for t in tunes], base[k]) for k in SHAPES})
close("multislerp --no-normalize", merge("msn.h5", "--method", "multislerp", "-w", "0.5,0.25", "--no-normalize"),
      {k: ref.multislerp([0.5, 0.25], [t[k] for t in tunes[:2]], normalize=False) for k in SHAPES})
write("anti.h5", {k: 2 * base[k] - v for k, v in tunes[0].items()})  # opposite task vector: the linear fallback
close("multislerp antipodal", merge("msa.h5", "--method", "multislerp", "--base", "base.h5",
                                    inputs=("x0.h5", "anti.h5")),
      {k: ref.multislerp([1, 1], [tunes[0][k], 2 * base[k] - tunes[0][k]], base[k]) for k in SHAPES})


# --- karcher (the mean's tangent steps from its Gram matrix in wavg, step by step on the tensors here) -----------
close("karcher", merge("ka.h5", "--method", "karcher", inputs=X),
      {k: ref.karcher([t[k] for t in tunes]) for k in SHAPES})
spread = [{k: rng.normal(size=s) for k, s in SHAPES.items()} for _ in range(3)]  # far apart: several steps
for i, s in enumerate(spread):
    write(f"r{i}.h5", s)
close("karcher --karcher-max-iter 20 --karcher-tol 1e-9",
      merge("kt.h5", "--method", "karcher", "--karcher-max-iter", "20", "--karcher-tol", "1e-9", inputs=X),
      {k: ref.karcher([t[k] for t in tunes], 20, 1e-9) for k in SHAPES})
close("karcher spread", merge("kr.h5", "--method", "karcher", inputs=("r0.h5", "r1.h5", "r2.h5")),
      {k: ref.karcher([s[k] for s in spread]) for k in SHAPES})
