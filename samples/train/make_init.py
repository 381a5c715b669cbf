#!/usr/bin/env python3
"""Writes samples/train/init.h5: the starting model of the external-trainer example (samples/train/train.py).

An MLP 64-64-10 for the digits set, as wavg local-sgd names its layers: dense/kernel (64, 64), dense/bias (64,),
dense_1/kernel (64, 10), dense_1/bias (10,), float32; kernels He-normal from numpy's PCG64 seeded 1, biases 0.
Run from the repository root: python3 samples/train/make_init.py (h5py stores no timestamps: same bytes each run).
"""
import h5py
import numpy as np

rng = np.random.default_rng(1)
with h5py.File("samples/train/init.h5", "w") as f:
    for name, (n_in, n_out) in (("dense", (64, 64)), ("dense_1", (64, 10))):
        f[f"{name}/kernel"] = (rng.standard_normal((n_in, n_out)) * np.sqrt(2 / n_in)).astype(np.float32)
        f[f"{name}/bias"] = np.zeros(n_out, np.float32)
