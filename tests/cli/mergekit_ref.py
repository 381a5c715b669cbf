"""numpy implementations of mergekit's merge formulas (mergekit 0.1.x: sparsify.py, generalized_task_arithmetic.py,
slerp.py, nuslerp.py, multislerp.py, karcher.py, model_stock.py, linear.py, config.py's evaluate_setting),
written from its source for the CLI tests; no wavg code. DARE's and DELLA's drop masks are wavg's Philox4x32-10
keying (wavg-merge(1)), computed with numpy's uint64 arithmetic, since torch's Bernoulli draws cannot be
reproduced."""
import re

import numpy as np


def magnitude(tv, density):
    """sparsify.magnitude: the k = int(density * n) largest |tv| (wavg keeps at least one: see ties_keep)."""
    if density >= 1:
        return tv
    k = max(1, int(density * tv.size))
    mask = np.zeros(tv.size)
    mask[np.argsort(-np.abs(tv).reshape(-1), kind="stable")[:k]] = 1
    return tv * mask.reshape(tv.shape)


def breadcrumbs(tv, density, gamma):
    """sparsify.magnitude_outliers: with |tv| sorted ascending, drop the n - target - top smallest (at least 0)
    and keep the next target = int(density * n), so the top = int(gamma * n) largest go too (fewer of them when
    target + top > n); nothing when target is 0. density >= 1 returns tv whole."""
    if density >= 1:
        return tv
    n = tv.size
    target, top = int(density * n), int(gamma * n)
    bottom = max(0, n - target - top)
    mask = np.zeros(n)
    mask[np.argsort(np.abs(tv).reshape(-1), kind="stable")[bottom:bottom + target]] = 1
    return tv * mask.reshape(tv.shape)


M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
U32 = np.uint64(0xFFFFFFFF)


def philox_word(seed, stream, index, word):
    """wavg/philox.hpp: counter (index, stream), key seed; one word / 2^32."""
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


def dare(tv, density, seed, tensor, k, rescale="l1"):
    """sparsify.bernoulli with wavg's mask (4 inputs a Philox block). rescale: "l1" (mergekit >= 0.1's
    rescaled_masked_tensor: masked * |tv|_1 / |masked|_1 unless either is below 1e-7), "inverse-density"
    (tv / density, the DARE paper) or "none"."""
    u = philox_word(seed, tensor + ((k // 4) << 32), np.arange(tv.size, dtype=np.uint64), k % 4).reshape(tv.shape)
    if rescale == "inverse-density":
        return np.where(u < density, tv / density, 0.0)
    return rescaled(tv, u < density, rescale)


def rescaled(tv, keep, rescale):
    """sparsify.rescaled_masked_tensor with the L1 norm: masked * |tv|_1 / |masked|_1 unless either is below
    1e-7 (rescale "l1"), or the masked tensor as it is ("none")."""
    masked = np.where(keep, tv, 0.0)
    before, after = np.abs(tv).sum(), np.abs(masked).sum()
    if rescale == "none" or before < 1e-7 or after < 1e-7:
        return masked
    return masked * (before / after)


def della(tv, density, epsilon, seed, tensor, k, rescale="l1"):
    """sparsify.della_magprune with wavg's mask: the magnitudes ranked along dimension 1 (a 1-D tensor is one
    row; equal magnitudes by index, where torch's unstable argsort would choose), keep probability
    p = (density - epsilon) + rank / (n - 1) * 2 * epsilon with rank 0 for a row's smallest, kept where DARE's
    uniform (the same Philox keying) is below p; a row of one entry (mergekit: 0/0) takes p = density. density >= 1
    returns tv whole."""
    if density >= 1:
        return tv
    rows = np.moveaxis(tv.reshape(1, -1) if tv.ndim < 2 else tv, 1, -1)  # dimension 1 last
    n = rows.shape[-1]
    ranks = np.argsort(np.argsort(np.abs(rows), axis=-1, kind="stable"), axis=-1, kind="stable")
    p = (density - epsilon) + ranks / (n - 1) * 2 * epsilon if n > 1 else np.full(rows.shape, density)
    p = np.moveaxis(p, -1, 1).reshape(tv.shape)
    u = philox_word(seed, tensor + ((k // 4) << 32), np.arange(tv.size, dtype=np.uint64), k % 4).reshape(tv.shape)
    return rescaled(tv, u < p, rescale)


def gta(base, xs, weights, lam, sparsify, consensus, normalize):
    """GTATask.execute for one tensor: sparsify(tv, i) each task vector, weigh, elect signs, mix, scale, add."""
    tvs = np.stack([sparsify(x - base, i) for i, x in enumerate(xs)])
    w = np.array(weights, dtype=np.float64).reshape(-1, *[1] * (tvs.ndim - 1))
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
    return base + lam * mixed


def linear(xs, weights, normalize=True):
    """linear.py: sum_k w_k x_k, divided by sum_k w_k."""
    w = np.array(weights, dtype=np.float64).reshape(-1, *[1] * xs[0].ndim)
    res = (np.stack(xs) * w).sum(0)
    return res / w.sum(0) if normalize else res


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


def nuslerp(w, v0, v1, base=None, eps=1e-8):
    """nuslerp.py with nuslerp_flatten (its default): t = w1 / (w0 + w1) (0.5 when the sum is below 1e-6), each
    flattened tensor normalised by max(|v|, 1e-7); colinear when 1 - cos^2 <= eps^2; with a base, on task vectors."""
    if base is not None:
        return base + nuslerp(w, v0 - base, v1 - base, None, eps)
    total = w[0] + w[1]
    t = 0.5 if abs(total) < 1e-6 else w[1] / total
    u0 = v0.reshape(-1) / max(np.linalg.norm(v0), 1e-7)
    u1 = v1.reshape(-1) / max(np.linalg.norm(v1), 1e-7)
    cos = np.clip(np.sum(u0 * u1), -1, 1)
    if 1 - cos * cos <= eps ** 2:
        return (1 - t) * v0 + t * v1
    theta = np.arccos(cos)
    return (np.sin((1 - t) * theta) * v0 + np.sin(t * theta) * v1) / np.sin(theta)


def multislerp(w, xs, base=None, normalize=True, eps=1e-8):
    """multislerp.py, step by step (tangent projection and exponential map included): on task vectors with a base;
    one input is returned as it is; a zero weighted mean of the unit vectors falls back to linear for two."""
    if len(xs) == 1:
        return xs[0]
    vs = np.stack([x - base if base is not None else x for x in xs]).reshape(len(xs), -1)
    w = np.array(w, dtype=np.float64)
    if normalize:
        w = w / w.sum()
    norms = np.linalg.norm(vs, axis=1, keepdims=True)
    units = vs / (norms + eps)
    mean = (units * w[:, None]).sum(0)
    mn = np.linalg.norm(mean)
    if mn < eps:
        assert len(xs) == 2, "mergekit refuses"
        res = vs[0] * w[0] + vs[1] * w[1]
    else:
        mean = mean / mn
        tangents = units - (units * mean).sum(-1, keepdims=True) * mean
        tr = (tangents * w[:, None]).sum(0)
        tn = np.linalg.norm(tr) + eps
        res = (mean * np.cos(tn) + tr * (np.sin(tn) / tn)) * (norms[:, 0] * w).sum()
    res = res.reshape(xs[0].shape)
    return res + base if base is not None else res


def karcher(xs, max_iter=10, tol=1e-5):
    """karcher.py's karcher_merge_tensors with weights 1/N, on flattened float64 tensors."""
    if len(xs) == 1:
        return xs[0]
    norms = [np.linalg.norm(x) for x in xs]
    units = [x / n if n != 0 else np.zeros_like(x) for x, n in zip(xs, norms)]
    valid = [i for i, n in enumerate(norms) if n > tol]
    if not valid:
        return xs[0] * 0
    alphas = [1 / len(valid)] * len(valid)
    us = [units[i] for i in valid]
    mean = sum(a * u for a, u in zip(alphas, us))
    mn = np.linalg.norm(mean)
    mean = us[0].copy() if mn < tol else mean / mn
    for _ in range(max_iter):
        tangent = np.zeros_like(mean)
        for a, u in zip(alphas, us):
            dot = np.clip(np.sum(mean * u), -1, 1)
            theta = np.arccos(dot)
            if theta < tol:
                continue
            tangent += a * (theta / np.sin(theta)) * (u - dot * mean)
        tn = np.linalg.norm(tangent)
        if tn < tol:
            break
        mean = np.cos(tn) * mean + np.sin(tn) * (tangent / tn)
        un = np.linalg.norm(mean)
        if un > tol:
            mean = mean / un
    return sum(n / len(xs) for n in norms) * mean


def model_stock(xs, b, eps=1e-6, pole=1e-6, filter_wise=False):
    """model_stock.py on flattened tensors (norm-product floor 1e-6), or with filter_wise on each row along the last
    dimension (torch's dim=-1; a 1-D tensor is one row), each row with its own t; where |1 + (N-1) cos| < 1e-6 (the
    pole) the base (that row's, filter-wise)."""
    rows = (lambda x: x.reshape(-1, b.shape[-1])) if filter_wise and b.ndim else (lambda x: x.reshape(1, -1))
    base, ws = rows(b), [rows(x) for x in xs]
    tvs = [w - base for w in ws]
    cos = []
    for i in range(len(tvs)):
        for j in range(i + 1, len(tvs)):
            norms = np.linalg.norm(tvs[i], axis=-1) * np.linalg.norm(tvs[j], axis=-1)
            cos.append(np.clip(np.sum(tvs[i] * tvs[j], axis=-1) / np.maximum(norms, eps), -1, 1))
    c = np.mean(cos, axis=0)[:, None]
    n = len(xs)
    at_pole = np.abs(1 + (n - 1) * c) < pole
    t = np.where(at_pole, 0.0, n * c / np.where(at_pole, 1.0, 1 + (n - 1) * c))
    return (t * np.mean(np.stack(ws), axis=0) + (1 - t) * base).reshape(b.shape)


def write_h5(path, tensors):
    """Test helper: writes {name: array} as HDF5 datasets (h5py imported here only)."""
    import h5py
    with h5py.File(path, "w") as f:
        for k, v in tensors.items():
            f[k] = v


def read_h5(path):
    """Test helper: reads every top-level dataset of an HDF5 file written by write_h5 or wavg."""
    import h5py
    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: out.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
    return out


def agree(name, got, want, rel):
    """Test helper: every tensor of `want` agrees elementwise with `got` to `rel` relative; prints NAME ok."""
    for k in want:
        err = np.max(np.abs(got[k] - want[k]) / np.maximum(np.abs(want[k]), 1e-300))
        assert err <= rel, (name, k, err)
    print(name, "ok")


def evaluate_setting(setting, tensor, t):
    """config.py's evaluate_setting: a number, a gradient (list of numbers), or [{filter, value}, ...]."""
    if isinstance(setting, (int, float)):
        return setting
    if all(isinstance(e, (int, float)) for e in setting):
        scaled = t * (len(setting) - 1)
        i0 = int(scaled)
        i1 = min(len(setting) - 1, i0 + 1)
        frac = scaled - i0
        return (1 - frac) * setting[i0] + frac * setting[i1]
    for cond in setting:
        if cond.get("filter") in (None, "*") or cond["filter"] in tensor:
            return evaluate_setting(cond["value"], tensor, t)
    return None


def layer_t(names):
    """plan.py: layer idx of L has t = idx / (L - 1); tensors outside the layers, 0."""
    idx = {n: int(m.group(1)) for n in names if (m := re.search(r"(?:^|\.)layers\.(\d+)\.", n))}
    last = max(idx.values())
    return {n: (idx[n] / last if last else 1.0) if n in idx else 0.0 for n in names}


def nearswap(t, a, b):
    """nearswap.py: w = clamp(t / max(|a - b|, 1e-6), 0, 1); out = w b + (1 - w) a, a the base. A number divided by
    a tensor is torch's Tensor.__rtruediv__, reciprocal() * t (torch/_tensor.py), rounded twice: computed so here."""
    w = np.clip(1 / np.maximum(np.abs(a - b), 1e-6) * t, 0, 1)
    return w * b + (1 - w) * a


def sce(xs, b, topk=1.0):
    """sce.py: the floor(topk * nonzero) largest population variances across the task vectors kept (ties by index),
    weights the task vectors' mean squares over their sum (1/n below 1e-6), TIES's sign election, divided by the
    electing weights' sum (at least 1e-6)."""
    tv = np.stack([x - b for x in xs])
    if topk < 1:
        var = np.var(tv, axis=0)
        k = int(np.count_nonzero(var) * topk) if topk > 0 else 0
        mask = np.zeros(var.size)
        mask[np.argsort(-np.abs(var).reshape(-1), kind="stable")[:k]] = 1
        tv = tv * mask.reshape(var.shape)
    majority = np.where(tv.sum(axis=0) >= 0, 1.0, -1.0)
    w = np.array([np.mean(t ** 2) for t in tv])
    w = np.full(len(xs), 1 / len(xs)) if abs(w.sum()) < 1e-6 else w / w.sum()
    ew = w.reshape((-1,) + (1,) * (tv.ndim - 1)) * (np.sign(tv) == majority)
    return b + (tv * ew).sum(axis=0) / np.maximum(ew.sum(axis=0), 1e-6)


def arcee_fusion(a, b):
    """arcee_fusion.py: importance |b - a| times the KL divergence of the rows' softmaxes (+1e-8), kept where at
    least median + 1.5 IQR (quantiles at floor(q (n - 1)) of the sorted importances; mergekit samples 10^6 of them
    above that size, these tests stay below)."""
    def softmax_eps(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True) + 1e-8
    p, q = softmax_eps(b), softmax_eps(a)
    imp = np.abs(b - a) * np.sum(p * np.log(p / q), axis=-1)[..., None]
    s = np.sort(imp.reshape(-1))
    at = lambda f: s[int(f * (s.size - 1))]
    return a + (b - a) * (imp >= at(0.5) + 1.5 * (at(0.75) - at(0.25)))
