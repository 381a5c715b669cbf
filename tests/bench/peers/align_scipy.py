#!/usr/bin/env python3
"""The numpy/scipy reference for tests/bench/align_speed.py: weight matching (Git Re-Basin, algorithm 1) of two
Dense chains as the paper's code does it, every group's scores recomputed on each visit as float32 products
(numpy's BLAS) and each assignment solved by scipy.optimize.linear_sum_assignment.

Usage: align_scipy.py DIR LAYERS  (reads DIR/{a,b}_kernel_L.npy and _bias_L.npy as align_speed.py writes them;
prints the passes and writes DIR/scipy_perms.npy). Needs a python with numpy and scipy.
"""
import sys

import numpy as np
from scipy.optimize import linear_sum_assignment


def main():
    d, layers = sys.argv[1], int(sys.argv[2])
    load = lambda m, kind, l: np.load(f"{d}/{m}_{kind}_{l}.npy")  # noqa: E731
    a = [(load("a", "kernel", l), load("a", "bias", l)) for l in range(layers)]
    b = [(load("b", "kernel", l), load("b", "bias", l)) for l in range(layers)]
    w = a[0][0].shape[1]
    groups = layers - 1  # group l: the output units of layer l (kernel axis 1, bias, next kernel's axis 0)
    perms = [np.arange(w) for _ in range(groups)]
    rng = np.random.default_rng(0)
    for it in range(100):
        changed = False
        for l in rng.permutation(groups):
            kb = b[l][0] if l == 0 else b[l][0][perms[l - 1], :]
            s = a[l][0].T @ kb
            s += np.outer(a[l][1], b[l][1])
            kn = b[l + 1][0] if l + 1 == groups else b[l + 1][0][:, perms[l + 1]]
            s += a[l + 1][0] @ kn.T
            _, ci = linear_sum_assignment(s, maximize=True)
            old = s[np.arange(w), perms[l]].sum(dtype=np.float64)
            new = s[np.arange(w), ci].sum(dtype=np.float64)
            if new > old + 1e-12 * max(1.0, abs(old)):
                perms[l] = ci
                changed = True
            del s, kb, kn
        if not changed:
            break
    print(f"scipy reference: {it + 1} passes")
    np.save(f"{d}/scipy_perms.npy", np.stack(perms))


if __name__ == "__main__":
    main()
