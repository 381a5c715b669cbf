#!/usr/bin/env python3
"""Score a digits MLP checkpoint for `wavg soup --eval` (and `wavg merge --eval`): print its accuracy.

Usage: python3 samples/soup/eval.py MODEL.h5 [DIGITS.csv.gz]

MODEL is an HDF5 file holding dense/kernel, dense/bias, dense_1/kernel, ... as `wavg local-sgd` writes them
(kernels stored (in, out), ReLU between layers). The score is the accuracy on every row of the digits set
(samples/digits/digits.csv.gz), its features scaled by their range; the last line of output is the number,
as wavg-soup(1) reads it. Needs numpy and h5py (Debian: python3-numpy python3-h5py).
"""
import sys

import h5py
import numpy as np

model = sys.argv[1]
data = sys.argv[2] if len(sys.argv) > 2 else "samples/digits/digits.csv.gz"
rows = np.loadtxt(data, delimiter=",")
x, y = rows[:, :-1], rows[:, -1].astype(int)
lo, hi = x.min(axis=0), x.max(axis=0)
x = np.where(hi > lo, (x - lo) / np.where(hi > lo, hi - lo, 1), 0)
with h5py.File(model, "r") as f:
    layers = sorted((k for k in f if k == "dense" or k.startswith("dense_")),
                    key=lambda k: 0 if k == "dense" else int(k.split("_")[1]))
    h = x
    for i, name in enumerate(layers):
        h = h @ f[f"{name}/kernel"][()] + f[f"{name}/bias"][()]
        if i + 1 < len(layers):
            h = np.maximum(h, 0)
print(f"{np.mean(h.argmax(axis=1) == y):.6f}")
