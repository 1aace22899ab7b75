"""More of ``jax.scipy.special``: exponential integrals (``exp1``, ``expi``,
``expn``) and the sine and cosine integrals (``sici``), Spence's function
(the dilogarithm), Bessel functions of the first kind ``J_0 .. J_v``
(``bessel_jn``), the scaled complementary error function ``erfcx`` and the
Bernoulli numbers.

Each is a fixed number of series or continued-fraction steps chosen per
region with ``where`` (every region computed on an argument made safe for
it, so unused regions give no NaN to the derivative), so they trace, batch
and differentiate as any composition of ops does.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff.custom import custom_jvp

from ._util import default_float, dtype_of, promote_inexact, quiet

__all__ = ["exp1", "expi", "expn", "sici", "spence", "bessel_jn", "erfcx", "bernoulli"]

_EULER = 0.5772156649015329


def _series_e1(x: Any, terms: int = 40) -> Any:
    """``E1(x) = -gamma - ln x - sum (-x)^k / (k k!)`` (small ``x > 0``)."""
    total, term = xnp.zeros_like(x), xnp.ones_like(x)
    for k in range(1, terms + 1):
        term = term * (-x) / k
        total = total + term / k
    return -_EULER - xnp.log(x) - total


def _fraction_en(n: Any, x: Any, steps: int = 60) -> Any:
    """``E_n(x)`` by its continued fraction (``x`` above about 1), evaluated
    from the bottom up."""
    # E_n(x) = e^-x / (x + n - 1*n / (x + n + 2 - 2(n+1) / (x + n + 4 - ...)))
    tail = xnp.zeros_like(x)
    for i in range(steps, 0, -1):
        tail = -i * (n - 1 + i) / (x + n + 2 * i + tail)
    return xnp.exp(-x) / (x + n + tail)


@quiet
def exp1(x: Any) -> Any:
    """The exponential integral ``E1(x) = int_x^inf e^-t / t dt`` (NaN for ``x < 0``)."""
    (x,) = promote_inexact(x)
    small = x <= 1
    out = xnp.where(small, _series_e1(xnp.where(small & (x > 0), x, 0.5)),
                    _fraction_en(1.0, xnp.where(small, 2.0, x)))
    return xnp.where(x < 0, xnp.nan, xnp.where(x == 0, xnp.inf, out))


@quiet
def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral ``E_n(x) = int_1^inf e^-xt / t^n dt``
    for integer ``n >= 0`` and ``x >= 0``."""
    n, x = promote_inexact(n, x)
    small = x <= 1
    xs = xnp.where(small & (x > 0), x, 0.5)
    # the series: E_n(x) = (-x)^(n-1)/(n-1)! (psi(n) - ln x) - sum_{k != n-1} (-x)^k / (k (k-n+1)!)
    # summed as terms of fact = (-x)^k / k!
    nm1 = n - 1
    total = xnp.where(nm1 == 0, -xnp.log(xs) - _EULER, 1 / xnp.where(nm1 == 0, 1.0, nm1))
    fact = xnp.ones_like(xs)
    psi = lax.digamma(xnp.maximum(n, 1.0))
    for k in range(1, 60):
        fact = fact * (-xs) / k
        at_pole = k == nm1
        total = total + xnp.where(at_pole, fact * (psi - xnp.log(xs)),
                                  -fact / xnp.where(at_pole, 1.0, k - nm1))
    fraction = _fraction_en(n, xnp.where(small, 2.0, x))
    out = xnp.where(small, total, fraction)
    out = xnp.where(n == 0, xnp.exp(-x) / x, out)
    at_zero = xnp.where(n > 1, 1 / xnp.where(n > 1, nm1, 1.0), xnp.inf)
    out = xnp.where(x == 0, at_zero, out)
    return xnp.where((x < 0) | (n < 0) | (xnp.floor(n) != n), xnp.nan, out)


@quiet
def expi(x: Any) -> Any:
    """The exponential integral ``Ei(x)`` (principal value): ``-E1(-x)`` for
    ``x < 0``, a power series up to 40 and the asymptotic series beyond."""
    (x,) = promote_inexact(x)
    pos = xnp.where((x > 0) & (x <= 40), x, 1.0)
    total, term = xnp.zeros_like(pos), xnp.ones_like(pos)
    for k in range(1, 150):
        term = term * pos / k
        total = total + term / k
    series = _EULER + xnp.log(pos) + total
    big = xnp.where(x > 40, x, 50.0)
    asym, term = xnp.ones_like(big), xnp.ones_like(big)
    for k in range(1, 30):
        term = term * k / big
        asym = asym + term
    asym = xnp.exp(big) / big * asym
    out = xnp.where(x > 40, asym, series)
    out = xnp.where(x < 0, -exp1(xnp.where(x < 0, -x, 1.0)), out)
    return xnp.where((x == 0) | xnp.isnan(x), xnp.nan, out)


def _sici_series(x: Any, terms: int = 30) -> tuple[Any, Any]:
    """``Si = sum (-1)^k x^(2k+1) / ((2k+1) (2k+1)!)`` and ``Ci - gamma - ln x =
    sum_{k>=1} (-1)^k x^2k / (2k (2k)!)`` (A&S 5.2.14, 5.2.16), for ``x < 4``."""
    si, ci, power = xnp.zeros_like(x), xnp.zeros_like(x), xnp.ones_like(x)
    for n in range(1, 2 * terms):               # power = (-1)^(n//2) x^n / n!
        power = power * x / n
        if n % 2:
            si = si + power / n
        else:
            power = -power
            ci = ci + power / n
    return si, ci


def _e1_imaginary(x: Any, steps: int = 40) -> Any:
    """``E1(ix)`` for ``x >= 4`` by the even part of its continued fraction
    ``E1(z) = exp(-z) / (z + 1 - 1 / (z + 3 - 4 / (z + 5 - ...)))`` (A&S 5.1.22),
    from the bottom up."""
    z = 1j * lax.convert_element_type(x, np.result_type(dtype_of(x), np.complex64))
    tail = xnp.zeros_like(z)
    for k in range(steps, 0, -1):
        tail = (k * k) / (z + (2 * k + 1) - tail)
    return xnp.exp(-z) / (z + 1 - tail)


@quiet
def _sici_values(x: Any) -> tuple[Any, Any]:
    ax = xnp.abs(x)
    near = ax < 4
    safe_near = xnp.where(near & (ax > 0), ax, 1.0)
    si_near, ci_near = _sici_series(safe_near)
    ci_near = ci_near + _EULER + xnp.log(safe_near)
    e1 = _e1_imaginary(xnp.where(near | xnp.isinf(ax), 4.0, ax))   # -Ci + i (Si - pi/2)
    si = xnp.where(near, si_near, math.pi / 2 + lax.imag(e1))
    ci = xnp.where(near, ci_near, -lax.real(e1))
    si = xnp.where(ax == 0, 0.0, xnp.where(xnp.isinf(ax), math.pi / 2, si))
    ci = xnp.where(ax == 0, -np.inf, xnp.where(xnp.isinf(ax), 0.0, ci))
    # Si is odd; SciPy gives Ci(|x|) for negative x (and NaN at -inf)
    ci = xnp.where(xnp.isneginf(x), np.nan, ci)
    return xnp.where(x < 0, -si, si), xnp.where(xnp.isnan(x), x, ci)


@custom_jvp
def _sici(x: Any) -> tuple[Any, Any]:
    return _sici_values(x)


@_sici.defjvp
def _sici_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    safe = xnp.where(x == 0, 1.0, x)
    return _sici(x), (t * xnp.where(x == 0, 1.0, xnp.sin(safe) / safe), t * xnp.cos(x) / x)


def sici(x: Any) -> tuple[Any, Any]:
    """The sine and cosine integrals ``(Si(x), Ci(x))``: power series below
    4, ``E1(ix) = -Ci(x) + i (Si(x) - pi/2)`` above."""
    (x,) = promote_inexact(x)
    return _sici(x)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers ``B_0 .. B_n`` (``B_1 = -1/2``), exact fractions
    from ``sum_{k<=m} C(m+1, k) B_k = 0``, rounded once."""
    n = int(n)
    if n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n}")
    numbers: list[Fraction] = []
    for m in range(n + 1):
        numbers.append(Fraction(1) if m == 0 else
                       -sum(math.comb(m + 1, k) * b for k, b in enumerate(numbers)) / (m + 1))
    def rounded(b: Fraction) -> float:
        try:
            return float(b)
        except OverflowError:                   # |B_n| > 1.8e308 from n = 260 on
            return math.inf if b > 0 else -math.inf
    return xnp.asarray(np.array([rounded(b) for b in numbers]), default_float())


# B_n / (n + 1)! for n = 0, 1, 2, 4, ..., 20: Li2(y) = sum c_n u^(n+1), u = -ln(1 - y)
_LI2_COEFFICIENTS = [(0, 1.0), (1, -0.25)] + [
    (n, b / math.factorial(n + 1)) for n, b in
    ((2, 1 / 6), (4, -1 / 30), (6, 1 / 42), (8, -1 / 30), (10, 5 / 66), (12, -691 / 2730),
     (14, 7 / 6), (16, -3617 / 510), (18, 43867 / 798), (20, -174611 / 330))]


def _li2_central(y: Any) -> Any:
    """``Li2(y)`` for ``-1 <= y <= 1/2``, in powers of ``u = -ln(1 - y)``."""
    u = -xnp.log1p(-y)
    return sum(c * u ** (n + 1) for n, c in _LI2_COEFFICIENTS)


@quiet
def spence(x: Any) -> Any:
    """Spence's function ``int_1^x ln t / (1 - t) dt = Li2(1 - x)`` for
    ``x >= 0`` (NaN below), the dilogarithm brought into ``[-1, 1/2]`` by its
    reflection and inversion formulas."""
    (x,) = promote_inexact(x)
    y = 1 - x
    pi2_6 = float(np.pi ** 2 / 6)
    central = _li2_central(xnp.clip(y, -1.0, 0.5))
    high = xnp.clip(y, 0.5, 1.0)                       # Li2(y) = pi^2/6 - ln y ln(1-y) - Li2(1-y)
    safe_1my = xnp.where(high < 1, 1 - high, 0.5)
    reflected = pi2_6 - xnp.log(high) * xnp.log(safe_1my) - _li2_central(1 - high)
    reflected = xnp.where(high < 1, reflected, pi2_6)
    low = xnp.minimum(y, -1.0)                          # Li2(y) = -pi^2/6 - ln^2(-y)/2 - Li2(1/y)
    inverted = -pi2_6 - 0.5 * xnp.log(-low) ** 2 - _li2_central(1 / low)
    out = xnp.where(y > 0.5, reflected, xnp.where(y < -1, inverted, central))
    return xnp.where((x < 0) | xnp.isposinf(x), xnp.nan, out)


@quiet
def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """``J_0(z) .. J_v(z)`` stacked on a new leading axis, from the integral
    ``J_n(z) = 1/pi int_0^pi cos(n t - z sin t) dt`` by the trapezoidal rule,
    which is exact to rounding for smooth periodic integrands once there are
    more points than about ``|z| + n`` (``4 * n_iter + 2 v`` points here)."""
    (z,) = promote_inexact(z)
    v = int(v)
    if v < 0:
        raise ValueError(f"bessel_jn: v must be a non-negative integer, got {v}")
    points = 4 * int(n_iter) + 2 * v
    t = np.linspace(0.0, np.pi, points + 1)
    weights = np.full(points + 1, np.pi / points)
    weights[[0, -1]] /= 2
    orders = np.arange(v + 1, dtype=np.float64)
    zt = z[None, None, ...]
    shape = (v + 1, points + 1) + (1,) * z.ndim
    phase = (orders[:, None] * t[None, :]).reshape(shape)
    sin_t = np.sin(t).reshape((1, points + 1) + (1,) * z.ndim)
    w = weights.reshape((1, points + 1) + (1,) * z.ndim)
    values = xnp.cos(phase.astype(z.dtype) - zt * sin_t.astype(z.dtype))
    return xnp.sum(values * w.astype(z.dtype), axis=1) / float(np.pi)


@quiet
def erfcx(x: Any) -> Any:
    """The scaled complementary error function ``exp(x^2) erfc(x)``: directly
    below 2, by Laplace's continued fraction above (no overflow), and
    ``2 exp(x^2) - erfcx(-x)`` for negative ``x``."""
    (x,) = promote_inexact(x)
    a = xnp.abs(x)
    near = xnp.where(a < 2, a, 1.0)
    direct = xnp.exp(near * near) * lax.erfc(near)
    far = xnp.where(a < 2, 2.0, a)
    # sqrt(pi) e^(x^2) erfc(x) = 1 / (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))
    tail = xnp.zeros_like(far)
    for k in range(60, 0, -1):
        tail = (k / 2) / (far + tail)
    fraction = 1 / (float(np.sqrt(np.pi)) * (far + tail))
    positive = xnp.where(a < 2, direct, fraction)
    neg = xnp.minimum(x, 0.0)
    return xnp.where(x < 0, 2 * xnp.exp(neg * neg) - positive, positive)
