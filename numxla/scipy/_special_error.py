"""Relatives of the error function for ``jax.scipy.special``: the Faddeeva
function ``wofz``, Dawson's integral ``dawsn``, the Fresnel integrals
``fresnel`` and Owen's T function ``owens_t``.

``wofz`` is Weideman's rational approximation (J. A. C. Weideman,
"Computation of the complex error function", SIAM J. Numer. Anal. 31, 1994):
``w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz))`` with
``Z = (L + iz) / (L - iz)``, whose 36 coefficients are the FFT of
``exp(-t^2) (L^2 + t^2)`` sampled at ``t = L tan(theta / 2)`` (computed at
import); about 2e-14 relative over the upper half plane, and
``w(z) = 2 exp(-z^2) - w(-z)`` below it.  The Fresnel integrals and Dawson's
integral are ``w`` on lines through the origin, with power series near 0
(where ``w``'s absolute error would be a large relative one).  The
derivatives are the closed forms, as ``custom_jvp`` rules.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff.custom import custom_jvp

from ._util import dtype_of, promote_inexact, quiet

__all__ = ["wofz", "dawsn", "fresnel", "owens_t"]

_SQRT_PI = math.sqrt(math.pi)


def _weideman_coefficients(n: int = 36) -> tuple[float, np.ndarray]:
    """Weideman's ``L`` and polynomial coefficients (highest degree first)."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    scale = math.sqrt(n / math.sqrt(2))
    t = scale * np.tan(k * np.pi / (2 * m))
    samples = np.r_[0.0, np.exp(-t * t) * (scale * scale + t * t)]
    a = np.real(np.fft.fft(np.fft.fftshift(samples))) / (2 * m)
    return scale, a[1:n + 1][::-1]


_W_SCALE, _W_COEFFICIENTS = _weideman_coefficients()


def _faddeeva_upper(z: Any) -> Any:
    """``w(z)`` for ``Im z >= 0`` (Weideman's approximation)."""
    denominator = _W_SCALE - 1j * z
    big_z = (_W_SCALE + 1j * z) / denominator
    p = xnp.zeros_like(z)
    for c in _W_COEFFICIENTS:
        p = p * big_z + float(c)
    return 2 * p / (denominator * denominator) + (1 / _SQRT_PI) / denominator


@quiet
def _faddeeva(z: Any) -> Any:
    """``w(z)`` on the whole plane: reflected through ``w(z) = 2 exp(-z^2) -
    w(-z)`` below the real axis; ``i / (sqrt(pi) z)`` for huge ``|z|``."""
    lower = lax.imag(z) < 0
    upper_z = xnp.where(lower, -z, z)
    huge = xnp.abs(z) > 1e8
    safe = xnp.where(huge, 1.0 + 0j, upper_z)
    w = xnp.where(huge, 1j / (_SQRT_PI * upper_z), _faddeeva_upper(safe))
    return xnp.where(lower, 2 * xnp.exp(-z * z) - w, w)


@custom_jvp
def _wofz(z: Any) -> Any:
    return _faddeeva(z)


@_wofz.defjvp
def _wofz_jvp(primals: tuple, tangents: tuple) -> tuple:
    (z,), (t,) = primals, tangents
    w = _wofz(z)
    return w, (-2 * z * w + 2j / _SQRT_PI) * t


def wofz(z: Any) -> Any:
    """The Faddeeva function ``w(z) = exp(-z^2) erfc(-iz)`` (complex result)."""
    (z,) = promote_inexact(z)
    if not np.issubdtype(dtype_of(z), np.complexfloating):
        z = lax.convert_element_type(z, np.result_type(dtype_of(z), np.complex64))
    return _wofz(z)


# --------------------------------------------------------------------------
# Dawson's integral
# --------------------------------------------------------------------------

def _dawson_series(x: Any, terms: int = 30) -> Any:
    """``F(x) = sum_k (-2 x^2)^k x / (2k + 1)!!`` (A&S 7.1.5 with erf(ix))."""
    term, total = x, x
    for k in range(1, terms):
        term = term * (-2 * x * x) / (2 * k + 1)
        total = total + term
    return total


@custom_jvp
@quiet
def _dawsn(x: Any) -> Any:
    near = xnp.abs(x) < 1
    series = _dawson_series(xnp.where(near, x, 0.0))
    far = xnp.where(near, 1.0, x)
    complex_far = lax.convert_element_type(far, np.result_type(dtype_of(x), np.complex64))
    via_w = (_SQRT_PI / 2) * lax.imag(_faddeeva(complex_far))   # Im w(x) = 2 F(x) / sqrt(pi)
    out = xnp.where(near, series, via_w)
    return xnp.where(xnp.isinf(x), xnp.zeros_like(x), out)


_dawsn.defjvps(lambda t, out, x: t * (1 - 2 * x * out))


def dawsn(x: Any) -> Any:
    """Dawson's integral ``F(x) = exp(-x^2) int_0^x exp(t^2) dt``."""
    (x,) = promote_inexact(x)
    return _dawsn(x)


# --------------------------------------------------------------------------
# Fresnel integrals
# --------------------------------------------------------------------------

def _fresnel_series(x: Any, terms: int = 32) -> tuple[Any, Any]:
    """``C = sum (-1)^n (pi/2)^2n x^(4n+1) / ((2n)! (4n+1))`` and
    ``S = sum (-1)^n (pi/2)^(2n+1) x^(4n+3) / ((2n+1)! (4n+3))`` (A&S 7.3.11-13)."""
    u = (math.pi / 2) * x * x
    power = x                                  # x u^k / k! (with the sign of i^k)
    c, s = xnp.zeros_like(x), xnp.zeros_like(x)
    for k in range(terms):
        if k % 2 == 0:
            c = c + power / (2 * k + 1)
        else:
            s = s + power / (2 * k + 1)
        power = power * u / (k + 1) * (-1 if k % 2 else 1)
    return s, c


def _quarter_turns(x: Any) -> Any:
    """``x^2 mod 4``, so that ``pi/2 x^2`` has an accurate phase for large
    ``x``: ``x = hi + lo`` split in half-width parts (Veltkamp), whose
    products are exact."""
    split = 134217729.0 if dtype_of(x) == np.float64 else 4097.0
    scaled = split * x
    hi = scaled - (scaled - x)
    lo = x - hi
    parts = [xnp.fmod(v, 4.0) for v in (hi * hi, 2 * hi * lo, lo * lo)]
    return xnp.fmod(parts[0] + parts[1] + parts[2], 4.0)


@quiet
def _fresnel_values(x: Any) -> tuple[Any, Any]:
    ax = xnp.abs(x)
    near = ax < 1.6
    s_near, c_near = _fresnel_series(xnp.where(near, ax, 0.0))
    # C + iS = (1 + i)/2 (1 - exp(i pi x^2 / 2) w((1 + i) sqrt(pi) x / 2))  (A&S 7.3.22, 7.1.3)
    far = xnp.where(near | (ax > 1e150), 2.0, ax)
    complex_type = np.result_type(dtype_of(x), np.complex64)
    far_c = lax.convert_element_type(far, complex_type)
    phase = xnp.exp(1j * lax.convert_element_type((math.pi / 2) * _quarter_turns(far),
                                                  complex_type))
    cs = (0.5 + 0.5j) * (1 - phase * _faddeeva((1 + 1j) * (_SQRT_PI / 2) * far_c))
    s = xnp.where(near, s_near, xnp.where(ax > 1e150, 0.5, lax.imag(cs)))
    c = xnp.where(near, c_near, xnp.where(ax > 1e150, 0.5, lax.real(cs)))
    sign = xnp.sign(x)
    return sign * s, sign * c


@custom_jvp
def _fresnel(x: Any) -> tuple[Any, Any]:
    return _fresnel_values(x)


@_fresnel.defjvp
def _fresnel_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    angle = (math.pi / 2) * _quarter_turns(xnp.where(xnp.abs(x) > 1e150, 0.0, x))
    return _fresnel(x), (t * xnp.sin(angle), t * xnp.cos(angle))


def fresnel(x: Any) -> tuple[Any, Any]:
    """The Fresnel integrals ``(S(x), C(x))``, ``int_0^x sin`` and ``cos`` of
    ``pi t^2 / 2``."""
    (x,) = promote_inexact(x)
    return _fresnel(x)


# --------------------------------------------------------------------------
# Owen's T function
# --------------------------------------------------------------------------

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(24)
_GL_NODES, _GL_WEIGHTS = (_GL_NODES + 1) / 2, _GL_WEIGHTS / 2     # on [0, 1]


def _owens_t_core(h: Any, a: Any) -> Any:
    """``T(h, a)`` for ``h >= 0`` and ``0 <= a <= 1``: the defining integral
    ``exp(-h^2/2) / 2pi int_0^a exp(-h^2 x^2 / 2) / (1 + x^2) dx`` by
    Gauss-Legendre on ``[0, min(a, 10/h)]`` (the rest is below 1e-21 of it);
    ``h`` beyond 50 (where T underflows) is 50."""
    h = xnp.minimum(h, 50.0)
    span = xnp.minimum(a, 10 / xnp.maximum(h, 1e-300))
    x = span[..., None] * _GL_NODES.astype(dtype_of(h))
    integrand = xnp.exp(-0.5 * (h[..., None] * x) ** 2) / (1 + x * x)
    integral = span * xnp.sum(integrand * _GL_WEIGHTS.astype(dtype_of(h)), axis=-1)
    return xnp.exp(-0.5 * h * h) / (2 * math.pi) * integral


@quiet
def _owens_t_values(h: Any, a: Any) -> Any:
    h, a = xnp.broadcast_arrays(xnp.abs(h), a)     # T is even in h, odd in a
    sign, a = xnp.sign(a), xnp.abs(a)
    small = a <= 1
    inner = _owens_t_core(h, xnp.where(small, a, 0.0))
    # a > 1: T(h, a) = (Phi(h) Q(ah) + Phi(ah) Q(h)) / 2 - T(ah, 1/a)  (Owen, 1956)
    inv_a = xnp.where(small, 1.0, 1 / a)
    ah = xnp.where(small | (h == 0), 0.0, a * h)
    upper = lambda v: 0.5 * lax.erfc(v * float(1 / np.sqrt(2)))  # noqa: E731  Q(v) = 1 - Phi(v)
    outer = 0.5 * (upper(-h) * upper(ah) + upper(-ah) * upper(h)) - _owens_t_core(ah, inv_a)
    out = sign * xnp.where(small, inner, outer)
    return xnp.where(xnp.isnan(a), a, out)


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    return _owens_t_values(h, a)


@_owens_t.defjvp
def _owens_t_jvp(primals: tuple, tangents: tuple) -> tuple:
    """``dT/dh = -phi(h) erf(a h / sqrt 2) / 2``, ``dT/da = exp(-h^2 (1 + a^2)/2)
    / (2 pi (1 + a^2))``, from the integral."""
    (h, a), (th, ta) = primals, tangents
    one_a2 = 1 + a * a
    d_h = -xnp.exp(-0.5 * h * h) / (2 * math.sqrt(2 * math.pi)) * lax.erf(a * h / math.sqrt(2))
    d_a = xnp.exp(-0.5 * h * h * one_a2) / (2 * math.pi * one_a2)
    return _owens_t(h, a), d_h * th + d_a * ta


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function ``1/2pi int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx``."""
    return _owens_t(*promote_inexact(h, a))
