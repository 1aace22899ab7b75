"""Hypergeometric functions for ``jax.scipy.special``: Kummer's ``hyp1f1``,
Gauss's ``hyp2f1``, and the spherical harmonics ``sph_harm_y`` (associated
Legendre functions, which are hypergeometric too).

Each region of the real line is mapped where a power series converges
fast, with formulas from Abramowitz & Stegun (A&S) chapters 13 and 15, and
summed for a fixed number of terms, every region on arguments made safe for
it (so the ``where`` that picks one sends no NaN into the derivatives):

* ``hyp1f1``: Kummer's transformation ``M(a, b, x) = e^x M(b - a, b, -x)``
  (13.1.27) for ``x < 0``, the series up to 150, the asymptotic expansion
  (13.5.1) beyond.  Accurate for moderate ``|a|, |b|`` (below about 10:
  for large negative ``a`` the series' terms cancel).
* ``hyp2f1``: the series for ``0 <= x <= 1/2``, Pfaff's transformation
  (15.3.4) for ``x < 0``, and the expansion about 1 (15.3.6; its limits
  15.3.10-11 when ``c - a - b`` is an integer, below ``-25`` to ``25``)
  for ``x > 1/2``; every series is in an argument at most 1/2.  NaN for
  ``x > 1``, where it is complex or the series diverge.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.tracer.core import Tracer

from ._util import dtype_of, promote_inexact, quiet

__all__ = ["hyp1f1", "hyp2f1", "sph_harm_y"]

_SERIES_TERMS = 80          # hyp2f1's series, in arguments <= 1/2
_DEGENERATE_MAX = 25        # the largest |c - a - b| whose limit formula is used
_KUMMER_TERMS = 320         # hyp1f1's series, in arguments up to _kummer_switch
_ASYMPTOTIC_TERMS = 40
_EULER = 0.5772156649015329


def _nonpositive_integer(v: Any) -> Any:
    return (v <= 0) & (v == xnp.floor(v))


def _gamma_sign(v: Any) -> Any:
    """The sign of Gamma(v) (1 at the poles, where ``_rgamma`` is 0)."""
    return xnp.where((v < 0) & (xnp.fmod(xnp.floor(v), 2) != 0), -1.0, 1.0)


def _rgamma(v: Any) -> Any:
    """``1 / Gamma(v)``, 0 at the poles."""
    safe = xnp.where(_nonpositive_integer(v), 0.5, v)
    return xnp.where(_nonpositive_integer(v), 0.0, _gamma_sign(safe) * xnp.exp(-lax.lgamma(safe)))


def _gamma(v: Any) -> Any:
    return _gamma_sign(v) * xnp.exp(lax.lgamma(v))


def _terms(ratios: Any) -> Any:
    """The terms ``t_0 = 1, t_(k+1) = t_k r_k`` of a series, on a new last
    axis, from its term ratios ``r_k`` (``r[..., k]``): one cumulative
    product instead of a loop of ops."""
    ones = xnp.ones_like(ratios[..., :1])
    return xnp.concatenate([ones, xnp.cumprod(ratios[..., :-1], axis=-1)], axis=-1)


def _ratio(num: Any, den: Any) -> Any:
    """``num / den``, 0 where ``den`` is 0 (after the series has ended)."""
    return xnp.where(den == 0, 0.0, num / xnp.where(den == 0, 1.0, den))


def _k(count: int, like: Any) -> np.ndarray:
    return np.arange(count, dtype=dtype_of(like))


# --------------------------------------------------------------------------
# 2F1
# --------------------------------------------------------------------------

def _series_2f1(a: Any, b: Any, c: Any, z: Any) -> Any:
    """``sum_k (a)_k (b)_k / ((c)_k k!) z^k``, the first ``_SERIES_TERMS`` terms."""
    k = _k(_SERIES_TERMS, z)
    a, b, c, z = (v[..., None] for v in (a, b, c, z))
    return xnp.sum(_terms(_ratio((a + k) * (b + k) * z, (c + k) * (k + 1))), axis=-1)


def _degenerate_about_one(a: Any, b: Any, m: Any, w: Any) -> Any:
    """``F(a, b; a + b + m; 1 - w)`` for integer ``m >= 0`` (A&S 15.3.10-11):
    a finite sum of ``m`` terms and a logarithmic series in ``w``."""
    c = a + b + m
    a1, b1, m1, w1 = (v[..., None] for v in (a, b, m, w))
    n = _k(_DEGENERATE_MAX, w)                   # sum_{n<m} (a)_n (b)_n / (n! (1-m)_n) w^n
    finite = _terms(_ratio((a1 + n) * (b1 + n) * w1, (n + 1) * (1 - m1 + n)))
    finite = xnp.sum(xnp.where(n < m1, finite, 0.0), axis=-1)
    safe_m = xnp.where(m > 0, m, 1.0)
    finite = xnp.where(m > 0, _gamma(safe_m) * _gamma(c) * _rgamma(a + m) * _rgamma(b + m)
                       * finite, 0.0)
    # sum_n (a+m)_n (b+m)_n / (n! (n+m)!) w^n [ln w - psi(n+1) - psi(n+m+1) + psi(a+n+m)
    #                                          + psi(b+n+m)], absent where a or b is a pole
    scale = _gamma(c) * _rgamma(a) * _rgamma(b)
    a1 = xnp.where(scale == 0, 0.5, a)[..., None]
    b1 = xnp.where(scale == 0, 0.5, b)[..., None]
    n = _k(_SERIES_TERMS, w)
    psi_n1 = (-_EULER + np.concatenate([[0.0], np.cumsum(1 / n[1:])])).astype(n.dtype)
    terms = _terms((a1 + m1 + n) * (b1 + m1 + n) * w1 / ((n + 1) * (n + m1 + 1)))
    digammas = (xnp.log(w1) - psi_n1 - lax.digamma(n + m1 + 1) + lax.digamma(a1 + n + m1)
                + lax.digamma(b1 + n + m1))
    logarithmic = xnp.exp(-lax.lgamma(m + 1)) * xnp.sum(terms * digammas, axis=-1)
    sign = xnp.where(xnp.fmod(m, 2) == 0, 1.0, -1.0)
    return finite - xnp.where(scale == 0, 0.0, sign * w ** m * scale * logarithmic)


def _about_one(a: Any, b: Any, c: Any, w: Any) -> Any:
    """``F(a, b; c; 1 - w)`` for ``0 < w <= 1/2`` (A&S 15.3.6), by the limit
    formulas where ``s = c - a - b`` is (within sqrt(eps) of) an integer;
    the plain series where ``a`` or ``b`` ends it."""
    s = c - a - b
    m = xnp.round(s)
    tolerance = float(np.sqrt(np.finfo(dtype_of(w)).eps))
    polynomial = _nonpositive_integer(a) | _nonpositive_integer(b)
    degenerate = (xnp.abs(s - m) < tolerance) & (xnp.abs(m) <= _DEGENERATE_MAX) & ~polynomial
    regular_s = xnp.where(degenerate, 0.5, s)
    first = _gamma(c) * _gamma(regular_s) * _rgamma(c - a) * _rgamma(c - b)
    second = _gamma(c) * _gamma(-regular_s) * _rgamma(a) * _rgamma(b)
    regular = (first * _series_2f1(a, b, 1 - regular_s, w)
               + xnp.where(second == 0, 0.0, second * w ** regular_s
                           * _series_2f1(c - a, c - b, 1 + regular_s, w)))
    # m < 0: Euler's transformation F(a, b; c; z) = w^s F(c - a, c - b; c; z) (15.3.3)
    flip = m < 0
    da, db = xnp.where(flip, c - a, a), xnp.where(flip, c - b, b)
    safe_a, safe_b = (xnp.where(degenerate, v, 0.5) for v in (da, db))
    limit = _degenerate_about_one(safe_a, safe_b, xnp.where(degenerate, xnp.abs(m), 0.0), w)
    limit = xnp.where(flip, w ** m, 1.0) * limit
    plain = _series_2f1(a, b, c, xnp.where(polynomial, 1 - w, 0.0))
    return xnp.where(polynomial, plain, xnp.where(degenerate, limit, regular))


@quiet
def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Gauss's hypergeometric function ``2F1(a, b; c; x)`` for real ``x <= 1``."""
    a, b, c, x = xnp.broadcast_arrays(*promote_inexact(a, b, c, x))
    polynomial = _nonpositive_integer(a) | _nonpositive_integer(b)
    ends_before_c = ((_nonpositive_integer(a) & (a > c)) | (_nonpositive_integer(b) & (b > c)))
    pole = _nonpositive_integer(c) & ~ends_before_c
    direct = polynomial | ((x >= 0) & (x <= 0.5))
    # x < 0: Pfaff, F(a, b; c; x) = (1 - x)^-a F(a, c - b; c; z), z = x / (x - 1) in (0, 1)
    pfaff = ~direct & (x < 0)
    xn = xnp.where(pfaff, x, -0.5)
    z = xn / (xn - 1)
    b2 = xnp.where(pfaff, c - b, b)
    series = direct | (pfaff & (z <= 0.5))
    near = _series_2f1(a, b2, c, xnp.where(direct, x, xnp.where(series, z, 0.0)))
    # z or x in (1/2, 1): about 1, in 1 - z = 1 / (1 - x) or 1 - x
    w = xnp.where(pfaff, 1 / (1 - xn), 1 - x)
    far = _about_one(a, b2, c, xnp.where(series | (w <= 0) | (w > 0.5), 0.5, w))
    out = xnp.where(pfaff, (1 - xn) ** (-a), 1.0) * xnp.where(series, near, far)
    # x = 1: Gauss's sum Gamma(c) Gamma(c-a-b) / (Gamma(c-a) Gamma(c-b)) if c > a + b
    s = c - a - b
    gauss = _gamma(c) * _gamma(xnp.where(s > 0, s, 1.0)) * _rgamma(c - a) * _rgamma(c - b)
    out = xnp.where((x == 1) & ~polynomial, xnp.where(s > 0, gauss, np.inf), out)
    out = xnp.where(((x > 1) & ~polynomial) | xnp.isnan(a + b + c + x), np.nan, out)
    return xnp.where(pole, np.inf, out)


# --------------------------------------------------------------------------
# 1F1
# --------------------------------------------------------------------------

def _kummer_switch(like: Any) -> float:
    """Where hyp1f1's asymptotic expansion takes over from its series: 150
    (about 1e-14 there for ``|a|, |b| < 10``), 80 in float32 (whose series
    would overflow beyond)."""
    return 150.0 if dtype_of(like) == np.float64 else 80.0


def _series_1f1(a: Any, b: Any, y: Any, first: Any) -> Any:
    """``first * sum_k (a)_k / ((b)_k k!) y^k`` (``first = e^-y`` keeps the
    terms of Kummer's transformation finite)."""
    k = _k(_KUMMER_TERMS, y)
    a, b, y = (v[..., None] for v in (a, b, y))
    terms = _terms(_ratio((a + k) * y, (b + k) * (k + 1)))
    return xnp.sum(first[..., None] * terms, axis=-1)


def _asymptotic_1f1(a: Any, b: Any, y: Any, with_exp: Any) -> Any:
    """``M(a, b, y)`` for large ``y > 0`` (A&S 13.5.1, DLMF 13.7.2, on the
    real axis): ``Gamma(b) / Gamma(a) e^y y^(a-b) sum_k (b-a)_k (1-a)_k /
    (k! y^k) + Gamma(b) / Gamma(b-a) cos(pi a) y^-a sum_k (a)_k (1+a-b)_k /
    (k! (-y)^k)``; times ``e^-y`` where not ``with_exp``."""
    k = _k(_ASYMPTOTIC_TERMS, y)
    a1, b1, y1 = (v[..., None] for v in (a, b, y))
    growing = xnp.sum(_terms((b1 - a1 + k) * (1 - a1 + k) / ((k + 1) * y1)), axis=-1)
    algebraic = xnp.sum(_terms((a1 + k) * (1 + a1 - b1 + k) / ((k + 1) * -y1)), axis=-1)
    log_y = xnp.log(y)

    def scaled(series: Any, lower: Any, log_power: Any) -> Any:
        """``series Gamma(b) / Gamma(lower) y^power``, 0 at the poles of
        Gamma(lower), in one exponential (no overflow before the result's)."""
        pole = _nonpositive_integer(lower)
        lower = xnp.where(pole, 0.5, lower)
        log_scale = log_power + lax.lgamma(b) - lax.lgamma(lower)
        sign = _gamma_sign(b) * _gamma_sign(lower)
        return xnp.where(pole, 0.0, sign * series * xnp.exp(log_scale))
    growing = scaled(growing, a, xnp.where(with_exp, y, 0.0) + (a - b) * log_y)
    algebraic = xnp.cos(math.pi * a) * scaled(algebraic, b - a,
                                              xnp.where(with_exp, 0.0, -y) - a * log_y)
    return growing + algebraic


@quiet
def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Kummer's confluent hypergeometric function ``1F1(a; b; x) = M(a, b, x)``
    (1 at ``a = b = 0``, JAX's convention)."""
    a, b, x = xnp.broadcast_arrays(*promote_inexact(a, b, x))
    ends_before_b = _nonpositive_integer(a) & (a >= b)
    pole = _nonpositive_integer(b) & ~ends_before_b
    kummer = (x < 0) & ~_nonpositive_integer(a)
    a2, y = xnp.where(kummer, b - a, a), xnp.abs(xnp.where(kummer | (x >= 0), x, 0.0))
    switch = _kummer_switch(y)
    series = _nonpositive_integer(a2) | (y <= switch)
    y_near = xnp.where(series, y, 0.0)
    near = _series_1f1(a2, b, y_near, xnp.where(kummer, xnp.exp(-y_near), 1.0))
    far = _asymptotic_1f1(xnp.where(series, 0.5, a2), xnp.where(series | pole, 1.5, b),
                          xnp.where(series, 2 * switch, y), ~kummer)
    out = xnp.where(pole, np.inf, xnp.where(series, near, far))
    return xnp.where(xnp.isnan(a + b + x), np.nan, out)


# --------------------------------------------------------------------------
# spherical harmonics
# --------------------------------------------------------------------------

def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None,
               n_max: int | None = None) -> Any:
    """The spherical harmonic ``Y_n^m(theta, phi)`` (polar angle ``theta``,
    azimuth ``phi``), SciPy's normalisation and Condon-Shortley phase; 0
    where ``|m| > n``.  ``n_max`` (the largest ``n``, needed under ``jit``)
    bounds the degree recurrence (larger ``n`` are clipped to it, as JAX's).

    The normalised associated Legendre functions come from ``P_m^m`` and the
    stable three-term recurrence in the degree ``l`` (e.g. Holmes &
    Featherstone, J. Geodesy 76, 2002):
    ``P_l^m = a_l (x P_(l-1)^m - P_(l-2)^m / a_(l-1))``,
    ``a_l = sqrt((4 l^2 - 1) / (l^2 - m^2))``."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to sph_harm_y is not supported.")
    for name, v in (("n", n), ("m", m)):
        if not np.issubdtype(dtype_of(v), np.integer):
            raise TypeError(f"sph_harm_y: {name} must be an integer array, got {dtype_of(v)}")
    if n_max is None:
        if isinstance(n, Tracer):
            raise TypeError("sph_harm_y: pass n_max (a Python int) when n is traced")
        n_max = int(np.max(np.asarray(n))) if np.size(np.asarray(n)) else 0
    theta, phi = promote_inexact(theta, phi)
    real = dtype_of(theta)
    n, m, theta, phi = xnp.broadcast_arrays(xnp.asarray(n), xnp.asarray(m), theta, phi)
    n = xnp.minimum(n, int(n_max)).astype(real)
    am = xnp.abs(m).astype(real)
    x, sin_abs = xnp.cos(theta), xnp.abs(xnp.sin(theta))
    log_pmm = 0.5 * (xnp.log(2 * am + 1) - math.log(4 * math.pi) + lax.lgamma(am + 0.5)
                     - lax.lgamma(am + 1) - 0.5 * math.log(math.pi))
    log_pmm = log_pmm + xnp.where(am == 0, 0.0, am * xnp.log(sin_abs))
    odd = xnp.fmod(am, 2) == 1
    previous = xnp.where(odd, -1.0, 1.0) * xnp.exp(log_pmm)
    before = xnp.zeros_like(previous)
    legendre = xnp.where(n == am, previous, 0.0)
    for j in range(1, int(n_max) + 1):
        degree = am + j
        a_l = xnp.sqrt((4 * degree * degree - 1) / (degree * degree - am * am))
        back = xnp.sqrt(((degree - 1) ** 2 - am * am) / (4 * (degree - 1) ** 2 - 1))  # 1/a_(l-1)
        before, previous = previous, a_l * (x * previous - back * before)
        legendre = xnp.where(n == degree, previous, legendre)
    # Y_n^-m = (-1)^m conj(Y_n^m)
    legendre = xnp.where((m < 0) & odd, -legendre, legendre)
    complex_type = np.result_type(real, np.complex64)
    angle = lax.convert_element_type(m.astype(real) * phi, complex_type)
    return lax.convert_element_type(legendre, complex_type) * xnp.exp(1j * angle)
