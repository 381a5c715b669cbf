#!/usr/bin/python3
"""Checks wavg merge's task-vector methods against numpy implementations of mergekit's formulas, written here:
three float64 fine-tunes of one base, every method, agreement to 1e-12 relative. DARE's drop mask is Philox4x32-10
(Salmon et al., SC 2011) keyed as wavg-merge(1) says, computed here with numpy's uint64 arithmetic. Usage:
task_methods.py WAVG (run in an empty directory)."""
import subprocess
import sys

import h5py
import numpy as np

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


def close(name, got, want):
    for k in SHAPES:
        err = np.max(np.abs(got[k] - want[k]) / np.maximum(np.abs(want[k]), 1e-300))
        assert err <= 1e-12, (name, k, err)
    print(name, "ok")


# --- sparsification ---------------------------------------------------------------------------------------------
def magnitude(tv, density):  # mergekit sparsify.magnitude: the k = int(density * n) largest |tv|
    k = int(density * tv.size)
    mask = np.zeros(tv.size)
    mask[np.argsort(-np.abs(tv).reshape(-1), kind="stable")[:k]] = 1
    return tv * mask.reshape(tv.shape)


M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
U32 = np.uint64(0xFFFFFFFF)


def philox_word(seed, stream, index, word):  # wavg/philox.hpp: counter (index, stream), key seed; one word / 2^32
    c0 = index & U32
    c1 = index >> np.uint64(32)
    c2 = np.full_like(index, stream & 0xFFFFFFFF)
    c3 = np.full_like(index, stream >> 32)
    k0, k1 = seed & 0xFFFFFFFF, seed >> 32
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
        p0 = np.uint64(M0) * c0
        p1 = np.uint64(M1) * c2
        c0, c1, c2, c3 = ((p1 >> np.uint64(32)) ^ c1 ^ np.uint64(k0), p1 & U32,
                          (p0 >> np.uint64(32)) ^ c3 ^ np.uint64(k1), p0 & U32)
    return (c0, c1, c2, c3)[word].astype(np.float64) * 2.0 ** -32


def dare(tv, density, seed, tensor, k):  # mergekit sparsify.random with rescale, wavg's mask: 4 inputs a block
    u = philox_word(seed, tensor + ((k // 4) << 32), np.arange(tv.size, dtype=np.uint64), k % 4).reshape(tv.shape)
    return np.where(u < density, tv / density, 0.0)


# --- the generalized task arithmetic of mergekit ---------------------------------------------------------------
def gta(weights, lam, sparsify, consensus, normalize):
    out = {}
    for t, k in enumerate(SHAPES):  # plan order is the inputs' tensor order, as h5py lists them
        tvs = np.stack([sparsify(x[k] - base[k], t, i) for i, x in enumerate(tunes)])
        w = np.array(weights).reshape(-1, *[1] * (tvs.ndim - 1))
        wd = tvs * w
        if consensus:
            sign = np.where(wd.sum(0) >= 0, 1.0, -1.0)
            mask = np.sign(wd) == sign
            mixed = (wd * mask).sum(0)
            div = (w * mask).sum(0)
            div[div == 0] = 1
        else:
            mixed = wd.sum(0)
            div = np.broadcast_to(w.sum(0), mixed.shape).copy()
            div[np.abs(div) < 1e-8] = 1
        if normalize:
            mixed = mixed / div
        out[k] = base[k] + lam * mixed
    return out


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
      gta([1, 2, 1.5], 1.2, lambda tv, t, i: magnitude(tv, 0.3), True, True))
close("dare-linear", merge("dl.h5", "--base", "base.h5", "--method", "dare-linear", "--density", "0.6",
                           "--seed", "42", "-w", "0.5,0.3,0.2"),
      gta([0.5, 0.3, 0.2], 1, lambda tv, t, i: dare(tv, 0.6, 42, t, i), False, False))
close("dare-ties", merge("dt.h5", "--base", "base.h5", "--method", "dare-ties", "--density", "0.4", "--seed",
                         "7", "--lambda", "0.9"),
      gta([1, 1, 1], 0.9, lambda tv, t, i: dare(tv, 0.4, 7, t, i), True, False))


# --- SLERP (mergekit's slerp, as written there) -----------------------------------------------------------------
def slerp(t, v0, v1, dot_threshold=0.9995, eps=1e-8):
    c0, c1 = v0.copy(), v1.copy()
    n0, n1 = np.linalg.norm(v0), np.linalg.norm(v1)
    if n0 > eps:
        v0 = v0 / n0
    if n1 > eps:
        v1 = v1 / n1
    dot = np.sum(v0 * v1)
    if np.abs(dot) > dot_threshold:
        return (1 - t) * c0 + t * c1
    theta = np.arccos(dot)
    s = np.sin(theta)
    return np.sin(theta - theta * t) / s * c0 + np.sin(theta * t) / s * c1


for t in (0.0, 0.35, 1.0):
    close(f"slerp t={t}", merge(f"s{t}.h5", "--method", "slerp", "--t", str(t), inputs=["x0.h5", "x1.h5"]),
          {k: slerp(t, tunes[0][k], tunes[1][k]) for k in SHAPES})
got = read("s0.0.h5")
assert all(np.array_equal(got[k], tunes[0][k]) for k in SHAPES), "slerp --t 0 is not input 1"
# Nearly parallel tensors take the linear branch.
write("near.h5", {k: 2 * v + 1e-9 for k, v in tunes[0].items()})
close("slerp parallel", merge("sp.h5", "--method", "slerp", "--t", "0.25", inputs=["x0.h5", "near.h5"]),
      {k: 0.75 * tunes[0][k] + 0.25 * (2 * tunes[0][k] + 1e-9) for k in SHAPES})


# --- model stock (mergekit's compute_t on flattened tensors) -----------------------------------------------------
def model_stock(xs, b, eps=1e-8):
    tvs = [(x - b).reshape(-1) for x in xs]
    cos = []
    for i in range(len(tvs)):
        for j in range(i + 1, len(tvs)):
            cos.append(np.clip(np.dot(tvs[i], tvs[j]) / max(np.linalg.norm(tvs[i]) * np.linalg.norm(tvs[j]), eps),
                               -1, 1))
    c = np.mean(cos)
    n = len(xs)
    t = n * c / (1 + (n - 1) * c)
    return t * np.mean(np.stack(xs), axis=0) + (1 - t) * b


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
            "1", inputs=["big.h5"])["w"]
two = merge("j2.h5", "--base", "big_base.h5", "--method", "dare-linear", "--density", str(d), "--seed", "5", "-j",
            "2", inputs=["big.h5"])["w"]
assert one.tobytes() == two.tobytes(), "DARE differs between 1 and 2 threads"
kept = np.count_nonzero(one)
assert abs(kept - d * n) <= 3 * np.sqrt(n * d * (1 - d)), kept
assert np.all((one == 0) | (one == 1 / d))
print("dare threads and fraction ok")
