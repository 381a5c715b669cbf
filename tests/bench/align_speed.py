#!/usr/bin/env python3
"""Times `wavg align` on two 8-layer, 4096-wide MLPs (8 Dense kernels of 4096 x 4096 and their biases, float32,
134M parameters each, Keras 2 .h5 with a model_config), the README's alignment speed figure.

B is A with its 7 hidden groups permuted at random and Gaussian noise as large as the weights added, so the
search has structure to find (as between trained networks) but no exact answer. Usage:
    tests/bench/align_speed.py --wavg build/wavg --dir /tmp/align-bench [--width 4096] [--restarts 1]
Prints the wall time, the peak resident memory and wavg's report; checks that the permutation found for every group
is the one applied, since the noise is small enough for weight matching to undo it. With --scipy-python (a python
with numpy and scipy, e.g. a venv's), runs the numpy/scipy reference (peers/align_scipy.py) on the same weights
after wavg and prints its time and peak memory beside wavg's; --runs N interleaves N runs of each.
"""
import argparse
import json
import os
import subprocess
import sys
import time

import h5py
import numpy as np


def write(path, weights, config):
    with h5py.File(path, "w") as f:
        f.attrs["model_config"] = json.dumps(config)
        g = f.create_group("model_weights")
        g.attrs["layer_names"] = [n.encode() for n in weights]
        for name, (kernel, bias) in weights.items():
            lg = g.create_group(name)
            lg.attrs["weight_names"] = [f"{name}/kernel:0".encode(), f"{name}/bias:0".encode()]
            lg.create_dataset(f"{name}/kernel:0", data=kernel)
            lg.create_dataset(f"{name}/bias:0", data=bias)


def write_pair(d, w, n, for_reference=False):
    """Writes A and B (d/a.h5, d/b.h5), and with `for_reference` their arrays as .npy files for
    peers/align_scipy.py; returns (layer names, the permutation applied to each hidden group)."""
    os.makedirs(d, exist_ok=True)
    names = ["dense"] + [f"dense_{i}" for i in range(1, n)]
    config = {"class_name": "Sequential", "config": {"name": "mlp", "layers": [
        {"class_name": "InputLayer", "config": {"batch_input_shape": [None, w], "name": "input"}}] + [
        {"class_name": "Dense", "config": {"name": nm, "units": w, "activation": "relu", "use_bias": True}}
        for nm in names]}}
    rng = np.random.default_rng(0)
    A = {nm: (rng.standard_normal((w, w), dtype=np.float32) / np.sqrt(w),
              rng.standard_normal(w, dtype=np.float32) * 0.1) for nm in names}
    perms = [rng.permutation(w) for _ in range(n - 1)]  # B's unit j of hidden group l is A's unit perms[l][j]
    B = {}
    for l, nm in enumerate(names):
        k, b = A[nm]
        if l > 0:
            k = k[perms[l - 1]]
        if l < n - 1:
            k, b = k[:, perms[l]], b[perms[l]]
        noise = rng.standard_normal(k.shape, dtype=np.float32) / np.sqrt(w)
        B[nm] = (k + noise, b + rng.standard_normal(w, dtype=np.float32) * 0.1)
    write(f"{d}/a.h5", A, config)
    write(f"{d}/b.h5", B, config)
    if for_reference:
        for m, weights in (("a", A), ("b", B)):
            for l, nm in enumerate(names):
                np.save(f"{d}/{m}_kernel_{l}.npy", weights[nm][0])
                np.save(f"{d}/{m}_bias_{l}.npy", weights[nm][1])
    return names, perms


def align_argv(wavg, d, restarts=1):
    """Returns the `wavg align` command that aligns d/b.h5 to d/a.h5 into d/out.h5."""
    return [wavg, "align", f"{d}/b.h5", "--to", f"{d}/a.h5", "-o", f"{d}/out.h5", "-f", "--no-hash",
            "--align-restarts", str(restarts)]


def reference_argv(python, d, n):
    """Returns the numpy/scipy reference's command on the .npy files write_pair wrote."""
    return [python, os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "align_scipy.py"), d, str(n)]


def recovered(d, names, perms):
    """Whether wavg's output d/out.h5 undid every permutation write_pair applied."""
    with h5py.File(f"{d}/out.h5", "r") as out, h5py.File(f"{d}/b.h5", "r") as b:
        for l in range(len(names) - 1):
            got = out[f"model_weights/{names[l]}/{names[l]}/bias:0"][()]
            src = b[f"model_weights/{names[l]}/{names[l]}/bias:0"][()]
            # out = B permuted back to A's order: out[i] = B[inverse(perms)[i]].
            if not np.array_equal(got, src[np.argsort(perms[l])]):
                return False
    return True


def reference_recovered(d, perms):
    """Whether the reference's perms[l][i] (the unit of B placed at A's unit i) undid every permutation."""
    got = np.load(f"{d}/scipy_perms.npy")
    return all(np.array_equal(got[l], np.argsort(perms[l])) for l in range(len(perms)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--wavg", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--layers", type=int, default=8)
    p.add_argument("--restarts", type=int, default=1)
    p.add_argument("--scipy-python", help="a python with numpy and scipy: run the reference too")
    p.add_argument("--runs", type=int, default=1, help="runs of each (interleaved with the reference's)")
    a = p.parse_args()
    w, n = a.width, a.layers
    names, perms = write_pair(a.dir, w, n, bool(a.scipy_python))
    fmt = "%e s wall, %U s user, %S s system CPU, peak RSS %M KiB"
    cmd = ["/usr/bin/time", "-f", "wavg: " + fmt, *align_argv(a.wavg, a.dir, a.restarts)]
    ref = ["/usr/bin/time", "-f", "scipy reference: " + fmt, *reference_argv(a.scipy_python or "", a.dir, n)]
    for run in range(a.runs):
        start = time.monotonic()
        r = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.monotonic() - start
        sys.stdout.write(r.stdout + r.stderr)
        if r.returncode != 0:
            sys.exit(r.returncode)
        print(f"align: {seconds:.1f} s for two {n}-layer {w}-wide MLPs ({n * (w * w + w) / 1e6:.0f}M parameters each)")
        if a.scipy_python:
            r = subprocess.run(ref, capture_output=True, text=True)
            sys.stdout.write(r.stdout + r.stderr)
            if r.returncode != 0:
                sys.exit(r.returncode)
    assert recovered(a.dir, names, perms), "a group was not recovered"
    print("every group's permutation recovered")
    if a.scipy_python:
        same = reference_recovered(a.dir, perms)
        print("the reference recovered them too" if same else "the reference did not recover every group")


if __name__ == "__main__":
    main()
