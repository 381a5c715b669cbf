#!/usr/bin/env python3
"""An external trainer for `wavg local-sgd --train-cmd`: numpy SGD on this worker's shard of the digits set.

Usage: python3 samples/train/train.py --init IN.h5 --out OUT.h5 --rank R --round N [--workers K] [--epochs E]

It reads the model from --init (round 1: local-sgd's --init file; later rounds: the last average), trains an
MLP whose layers are the file's dense/kernel, dense/bias, dense_1/kernel, ... (kernels stored (in, out), ReLU
between layers, softmax cross-entropy) for E epochs of batches of 10 at learning rate 0.1 on rows R, R + K,
R + 2K, ... of samples/digits/digits.csv.gz (features / 16), and writes the same datasets to --out. Any
trainer that reads {init} and writes {out} in a format wavg reads will do; see wavg-local-sgd(1).
Needs numpy and h5py (Debian: python3-numpy python3-h5py).
"""
import argparse

import h5py
import numpy as np

ap = argparse.ArgumentParser()
for a in ("--init", "--out"):
    ap.add_argument(a, required=True)
ap.add_argument("--rank", type=int, required=True)
ap.add_argument("--round", type=int, required=True)
ap.add_argument("--workers", type=int, default=4)
ap.add_argument("--epochs", type=int, default=1)
ap.add_argument("--data", default="samples/digits/digits.csv.gz")
args = ap.parse_args()

with h5py.File(args.init, "r") as f:
    names = sorted((k for k in f if k == "dense" or k.startswith("dense_")),
                   key=lambda k: 0 if k == "dense" else int(k.split("_")[1]))
    w = [f[f"{n}/kernel"][()].astype(np.float64) for n in names]
    b = [f[f"{n}/bias"][()].astype(np.float64) for n in names]
data = np.loadtxt(args.data, delimiter=",")
x, y = data[args.rank::args.workers, :64] / 16, data[args.rank::args.workers, 64].astype(int)
rng = np.random.default_rng(1000 * args.round + args.rank)
for epoch in range(args.epochs):
    order = rng.permutation(len(x))
    for i in range(0, len(x), 10):
        xb, yb = x[order[i:i + 10]], y[order[i:i + 10]]
        hs = [xb]
        for k in range(len(w)):
            z = hs[-1] @ w[k] + b[k]
            hs.append(np.maximum(z, 0) if k + 1 < len(w) else z)
        p = np.exp(hs[-1] - hs[-1].max(axis=1, keepdims=True))
        g = p / p.sum(axis=1, keepdims=True)
        g[np.arange(len(yb)), yb] -= 1
        g /= len(yb)
        for k in reversed(range(len(w))):
            gw, gb = hs[k].T @ g, g.sum(axis=0)
            if k:
                g = (g @ w[k].T) * (hs[k] > 0)
            w[k] -= 0.1 * gw
            b[k] -= 0.1 * gb
with h5py.File(args.out, "w") as f:
    for n, wk, bk in zip(names, w, b):
        f[f"{n}/kernel"] = wk.astype(np.float32)
        f[f"{n}/bias"] = bk.astype(np.float32)
