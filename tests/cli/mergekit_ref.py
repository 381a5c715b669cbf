"""numpy implementations of mergekit's merge formulas (mergekit 0.1.x: sparsify.py, generalized_task_arithmetic.py,
slerp.py, model_stock.py, linear.py, config.py's evaluate_setting), written from its source for the CLI tests; no
wavg code. DARE's drop mask is wavg's Philox4x32-10 keying (wavg-merge(1)), computed with numpy's uint64 arithmetic,
since torch's Bernoulli draws cannot be reproduced."""
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
    masked = np.where(u < density, tv, 0.0)
    before, after = np.abs(tv).sum(), np.abs(masked).sum()
    if rescale == "none" or before < 1e-7 or after < 1e-7:
        return masked
    return masked * (before / after)


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


def model_stock(xs, b, eps=1e-6, pole=1e-6):
    """model_stock.py on flattened tensors (norm-product floor 1e-6); at the pole |1 + (N-1) cos| < 1e-6 the base."""
    tvs = [(x - b).reshape(-1) for x in xs]
    cos = []
    for i in range(len(tvs)):
        for j in range(i + 1, len(tvs)):
            cos.append(np.clip(np.dot(tvs[i], tvs[j]) / max(np.linalg.norm(tvs[i]) * np.linalg.norm(tvs[j]), eps),
                               -1, 1))
    c = np.mean(cos)
    n = len(xs)
    if abs(1 + (n - 1) * c) < pole:
        return b.copy()
    t = n * c / (1 + (n - 1) * c)
    return t * np.mean(np.stack(xs), axis=0) + (1 - t) * b


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
