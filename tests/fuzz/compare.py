"""Comparing compiled results with the reference, and the perturbation hook
that estimates how much rounding differences may legitimately move them.

The reference runs once as it is and :data:`NOISE_RUNS` times with ``_n``
perturbing the results of the ops that round differently in compiled code
(transcendentals, accumulations, f16/bf16 and complex arithmetic) by a few
ulps; in run :data:`WIDE_RUN` dots and convolutions also accumulate in a
wider type (:func:`accumulation`).  An element whose perturbed runs disagree
with the plain run in NaN, infinity or an integer value is *unstable* and not
compared; elsewhere a float may differ by :data:`BASE_ULPS` ulps plus four
times the largest deviation the perturbations caused.  Integers and pred must
be equal, NaN must match NaN, infinities and the sign of zero must match.
"""
from __future__ import annotations

import contextlib

import numpy as np

from .values import COMPLEX, EPS, FLOATS, bf16_values, bf16_words

NOISE_RUNS = 3
NOISE_ULPS = 4
WIDE_RUN = 0
BASE_ULPS = {"f16": 2, "bf16": 2, "f32": 4, "f64": 4, "c64": 8, "c128": 8}


class Perturb:
    """The ``_n`` hook: multiplies float results by ``1 + u * NOISE_ULPS * eps``.

    Runs k = 0, 1, 2 of the sensitivity runs also give the NaNs of every
    float result (their sign and payload are unspecified) and the zeros of
    accumulations (``zeros=True``: their sign depends on the order of the
    sum) the sign ``+, -, as is``; ``exact=True`` leaves the values alone;
    ``unit=True`` scales a complex value's errors by max(|x|, 1), not |x|
    (absolute errors: complex atan2, see ``rules_elementwise``)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.sign = (1.0, -1.0, None)[seed % 3]

    def __call__(self, x, zeros: bool = False, exact: bool = False, unit: bool = False):
        from numxla.tracer.core import BF16Array
        if isinstance(x, (tuple, list)):
            return type(x)(self(v, zeros, exact, unit) for v in x)
        if isinstance(x, BF16Array):
            v = bf16_values(np.asarray(x))
            return bf16_words(self._scale(v, "bf16", zeros, exact)).view(BF16Array)
        if not isinstance(x, (np.ndarray, np.generic)) or x.dtype.kind not in "fc":
            return x
        t = {np.float16: "f16", np.float32: "f32", np.float64: "f64", np.complex64: "c64",
             np.complex128: "c128"}[x.dtype.type]
        if x.dtype.kind == "c":  # errors relative to |x| (or max(|x|, 1)), in either part
            with np.errstate(all="ignore"):
                size = np.abs(x).astype(np.float64)
            size = np.where(np.isfinite(size), size, 0.0)
            if unit:
                size = np.maximum(size, 1.0)
            out = np.empty(np.shape(x), x.dtype)
            out.real = self._scale(x.real, t, zeros, exact, size)
            out.imag = self._scale(x.imag, t, zeros, exact, size)
            return out
        return self._scale(x, t, zeros, exact).astype(x.dtype)

    def _scale(self, v, t: str, zeros: bool, exact: bool, size=None):
        v = np.asarray(v)
        u = self.rng.uniform(-1, 1, v.shape)
        with np.errstate(all="ignore"):
            out = w = v.astype(np.float64)
            if not exact:  # infinities stay (inf + inf * u would be NaN for u < 0)
                step = u * NOISE_ULPS * EPS[t] * (np.abs(w) if size is None else size)
                out = np.where(np.isfinite(w), w + step, w)
            if self.sign is not None:
                out = np.where(np.isnan(out), np.copysign(np.nan, self.sign), out)
                if zeros:
                    out = np.where(out == 0, np.copysign(0.0, self.sign), out)
            return np.asarray(out, v.dtype)


# the types dots and convolutions accumulate in during WIDE_RUN
_WIDER = {np.dtype(np.float16): np.float64, np.dtype(np.float32): np.float64,
          np.dtype(np.float64): np.longdouble, np.dtype(np.complex64): np.complex128,
          np.dtype(np.complex128): np.clongdouble}


@contextlib.contextmanager
def accumulation(run: int):
    """Sensitivity run ``run``; in :data:`WIDE_RUN` the reference's dots and
    convolutions sum in a wider type (f32 in f64, f64 in long double where
    that is wider) and round once.  Products that overflow, or partial sums
    that do, then do not: an element that is NaN or infinite in one of the
    two runs only depends on the order of the sum and on fused multiply-adds,
    which XLA leaves to the shape (XLA:CPU gives NaN for a 64-element f32
    vector dot whose products overflow both ways, +-inf for a 17-element one
    or a 64 x 64 matrix product), and is not compared."""
    if run != WIDE_RUN:
        yield
        return
    from numxla.primitives import dot_conv
    plain = dot_conv._contract

    def wide(spec, lhs, rhs, out_type):
        to = _WIDER.get(np.asarray(lhs).dtype)
        if to is None:
            return plain(spec, lhs, rhs, out_type)
        return plain(spec, np.asarray(lhs).astype(to), np.asarray(rhs).astype(to), out_type)

    dot_conv._contract = wide
    try:
        yield
    finally:
        dot_conv._contract = plain


def values_of(x, t: str) -> np.ndarray:
    """The logical values of a result (bf16 words as f32)."""
    a = np.asarray(x)
    return bf16_values(a) if t == "bf16" else a


def _ulp(magnitude: np.ndarray, t: str) -> np.ndarray:
    base = {"f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
            "c64": np.float32, "c128": np.float64}[t]
    tiny = {"f16": 6e-5, "bf16": 1e-38, "f32": 1e-38, "f64": 1e-307, "c64": 1e-38,
            "c128": 1e-307}[t]
    with np.errstate(all="ignore"):
        spacing = np.spacing(np.maximum(np.abs(magnitude), tiny).astype(base)).astype(np.float64)
    return spacing * (2.0 ** 16 if t == "bf16" else 1.0)


def mismatch(got, want, noisy: list, t: str) -> str | None:
    """Why the compiled ``got`` is not the reference ``want`` (None if it is)."""
    g, w = values_of(got, t), values_of(want, t)
    if g.shape != w.shape:
        return f"shape {g.shape} against the reference's {w.shape}"
    if g.dtype != w.dtype:
        return f"dtype {g.dtype} against the reference's {w.dtype}"
    runs = [values_of(n, t) for n in noisy]
    if t not in FLOATS and t not in COMPLEX:
        unstable = np.zeros(w.shape, bool)
        for r in runs:
            unstable |= r != w
        bad = (g != w) & ~unstable
        return _describe(bad, g, w, "values differ") if bad.any() else None
    parts = [(lambda a: a.real), (lambda a: a.imag)] if t in COMPLEX else [lambda a: a]
    with np.errstate(all="ignore"):
        scale = np.array(np.abs(w), np.float64) if t in COMPLEX else None
        if scale is not None:
            scale[~np.isfinite(scale)] = 0.0
        for part in parts:
            problem = _float_mismatch(part(g).astype(np.float64), part(w).astype(np.float64),
                                      [part(r).astype(np.float64) for r in runs], t, scale)
            if problem:
                return problem
    return None


def _float_mismatch(g, w, runs, t: str, scale) -> str | None:
    unstable = np.zeros(w.shape, bool)
    deviation = np.zeros(w.shape)
    for r in runs:
        unstable |= (np.isnan(r) != np.isnan(w)) | (np.isinf(r) & (r != w)) | \
            (np.isinf(w) & (r != w)) | ((r == 0) & (w == 0) & (np.signbit(r) != np.signbit(w)))
        d = np.abs(r - w)
        deviation = np.where(np.isfinite(d), np.maximum(deviation, d), deviation)
    checks = (
        ((np.isnan(g) != np.isnan(w)) & ~unstable, "NaN in other places"),
        (np.isinf(w) & (g != w) & ~unstable & ~np.isnan(g), "infinities differ"),
        ((w == 0) & (g == 0) & (np.signbit(g) != np.signbit(w)) & ~unstable & (deviation == 0),
         "the sign of zero differs"),
    )
    for bad, what in checks:
        if bad.any():
            return _describe(bad, g, w, what)
    finite = np.isfinite(w) & ~unstable
    magnitude = np.maximum(np.abs(w), scale) if scale is not None else np.abs(w)
    tolerance = BASE_ULPS[t] * _ulp(magnitude, t) + 4 * deviation
    bad = finite & ~(np.abs(g - w) <= tolerance)
    if bad.any():
        err = np.abs(g - w)[bad] / _ulp(magnitude, t)[bad]
        return _describe(bad, g, w, f"values differ (up to {np.max(err):.3g} ulp)")
    return None


def _describe(bad: np.ndarray, g: np.ndarray, w: np.ndarray, what: str) -> str:
    where = np.argwhere(bad)
    i = tuple(int(k) for k in where[0])
    return (f"{what} at {len(where)} of {bad.size} elements, first at {list(i)}: "
            f"compiled {g[i]!r}, reference {w[i]!r}")
