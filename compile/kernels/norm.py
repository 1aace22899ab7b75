"""Batch normalisation as library kernels: compiled once per element type and
cached on disk, with the operand's geometry passed at run time, so a graph
with batch norms compiles none of their code (XLA's CPU backend calls a
runtime library for its big ops the same way).

The operand is a dense buffer seen as ``x[outer, features, inner]``: any
untiled, unpadded layout is, with ``outer``/``inner`` the products of the
dimensions more major/more minor than ``feature_index`` in the physical
order.  The arithmetic is the generated lowering's
(``compile/lowering/batch_norm.py``) term for term — the reference's
formulas in the compute type (the per-feature arrays' type), per-feature
sums in f64, the operand walked in its physical order — so results equal
it bit for bit, whichever path computes them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["batch_norm_training_f32", "batch_norm_training_f64", "batch_norm_inference",
           "batch_norm_grad"]

_OPTIONS = dict(cache=True, nogil=True, error_model="numpy")


@njit(**_OPTIONS)
def _normalize(x, scale, offset, mean, sd, y, outer, features, inner):
    """``y = scale * (x - mean) / sd + offset`` in the compute type."""
    if inner == 1:  # features minor (channels last): the feature loop vectorises
        for o in range(outer):
            base = o * features
            for f in range(features):
                y[base + f] = scale[f] * (x[base + f] - mean[f]) / sd[f] + offset[f]
        return
    for o in range(outer):
        for f in range(features):
            base = (o * features + f) * inner
            s, m, d, b = scale[f], mean[f], sd[f], offset[f]
            for i in range(base, base + inner):
                y[i] = s * (x[i] - m) / d + b


@njit(**_OPTIONS)
def _sd(variance, eps):
    """``sqrt(variance + eps)``, ``eps`` rounded to the compute type."""
    sd = np.empty_like(variance)
    e = variance.dtype.type(eps)
    for f in range(variance.size):
        sd[f] = np.sqrt(variance[f] + e)
    return sd


@njit(**_OPTIONS)
def batch_norm_training_f32(x, scale, offset, y, mean, variance, outer, features, inner, eps):
    """f32: one pass summing ``d = x - x0`` and ``d^2`` in f64 (``x0``: the
    feature's first element, 0 if not finite); the variance is taken about
    the rounded mean, as the reference takes it."""
    shift = np.zeros(features, np.float64)
    s1 = np.empty(features, np.float64)
    s2 = np.empty(features, np.float64)
    count = outer * inner
    if count:
        for f in range(features):
            v = np.float64(x[f * inner])
            if np.isfinite(v):
                shift[f] = v
    for f in range(features):  # each feature's sums in registers, in physical order
        x0, a, b = shift[f], 0.0, 0.0
        for o in range(outer):
            base = (o * features + f) * inner
            for i in range(base, base + inner):
                d = np.float64(x[i]) - x0
                a += d
                b += d * d
        s1[f] = a
        s2[f] = b
    n = np.float64(count)
    for f in range(features):
        dm = s1[f] / n
        m64 = shift[f] + dm
        mean[f] = m64
        v64 = s2[f] / n - dm * dm
        if v64 < 0.0:  # rounding; NaN passes through
            v64 = 0.0
        bias = m64 - np.float64(mean[f])
        variance[f] = v64 + bias * bias
    _normalize(x, scale, offset, mean, _sd(variance, eps), y, outer, features, inner)


@njit(**_OPTIONS)
def batch_norm_training_f64(x, scale, offset, y, mean, variance, outer, features, inner, eps):
    """f64: sum ``x`` (the mean), then ``(x - mean)^2`` (the biased variance)."""
    n = np.float64(outer * inner)
    for f in range(features):  # each feature's sums in registers, in physical order
        a = 0.0
        for o in range(outer):
            base = (o * features + f) * inner
            for i in range(base, base + inner):
                a += x[i]
        mean[f] = a / n
        m, b = mean[f], 0.0
        for o in range(outer):
            base = (o * features + f) * inner
            for i in range(base, base + inner):
                d = x[i] - m
                b += d * d
        variance[f] = b / n
    _normalize(x, scale, offset, mean, _sd(variance, eps), y, outer, features, inner)


@njit(**_OPTIONS)
def batch_norm_inference(x, scale, offset, mean, variance, y, outer, features, inner, eps):
    """``y`` from the given mean and variance."""
    _normalize(x, scale, offset, mean, _sd(variance, eps), y, outer, features, inner)


@njit(**_OPTIONS)
def batch_norm_grad(x, scale, mean, variance, dy, dx, dscale, doffset, outer, features, inner,
                    eps):
    """Pass 1 sums ``dy``, ``dy * (x - mean)`` and ``dy * (x - mean) / sd``
    (f64); pass 2 writes ``scale / sd * (dy - d - c * (x - mean))``."""
    work = scale.dtype.type
    var_eps = np.empty_like(variance)
    e = work(eps)
    for f in range(features):
        var_eps[f] = variance[f] + e
    sd = np.sqrt(var_eps)
    s_dy = np.empty(features, np.float64)
    s_dyc = np.empty(features, np.float64)
    s_dys = np.empty(features, np.float64)
    for f in range(features):  # each feature's sums in registers, in physical order
        m, d = mean[f], sd[f]
        a, b, c = 0.0, 0.0, 0.0
        for o in range(outer):
            base = (o * features + f) * inner
            for i in range(base, base + inner):
                g = dy[i]
                p = g * (x[i] - m)
                a += g
                b += p
                c += p / d
        s_dy[f] = a
        s_dyc[f] = b
        s_dys[f] = c
    n = work(outer * inner)
    c = np.empty_like(variance)
    dm = np.empty_like(variance)
    k = np.empty_like(variance)
    for f in range(features):
        c[f] = work(s_dyc[f]) / n / var_eps[f]
        dm[f] = work(s_dy[f]) / n
        k[f] = scale[f] / sd[f]
    if inner == 1:  # features minor (channels last): the feature loop vectorises
        for o in range(outer):
            base = o * features
            for f in range(features):
                i = base + f
                dx[i] = k[f] * (dy[i] - dm[f] - c[f] * (x[i] - mean[f]))
    else:
        for o in range(outer):
            for f in range(features):
                base = (o * features + f) * inner
                kf, df, cf, m = k[f], dm[f], c[f], mean[f]
                for i in range(base, base + inner):
                    dx[i] = kf * (dy[i] - df - cf * (x[i] - m))
    for f in range(features):
        dscale[f] = s_dys[f]
        doffset[f] = s_dy[f]
