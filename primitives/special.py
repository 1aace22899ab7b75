"""Special functions built from the op set, as XLA's client library builds
them (``xla/hlo/builder/lib/math.cc``) and JAX's ``lax`` exposes them:
compositions of element-wise ops, so they run eagerly, compile, and
differentiate through the ops they are made of.

``erf_inv``: for f32 (and the 16-bit floats, computed in f32) Giles'
single-precision approximation ("Approximating the erfinv function", 2010)
in XLA's form, so JAX's ``random.normal`` bits are reproduced; for f64 that
estimate refined by Newton steps on ``erf``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tracer.core import abstractify
from tracer.shapes import PrimitiveType as PT

from .elementwise import (abs, clamp, convert_element_type, eq, erf, exp, gt, log1p, lt,
                          select, sqrt)
from .shape_ops import broadcast_in_dim

__all__ = ["erf_inv"]

# Giles' coefficients, highest degree first: w = -log(1 - x^2) below 5
# (shifted by 2.5) and sqrt(w) at or above 5 (shifted by 3)
_ERF_INV_SMALL_W = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                    0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_LARGE_W = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                    0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


_NEWTON_STEPS = 14  # enough from f32's last estimate (3.7) to the largest root (5.9)


def _horner(coefficients: tuple[float, ...], w: Any) -> Any:
    aval = abstractify(w)
    p = broadcast_in_dim(np.asarray(coefficients[0], aval.dtype), aval.dimensions, ())
    for c in coefficients[1:]:
        p = c + p * w
    return p


def _signed_inf(x: Any) -> Any:
    """inf with the sign of x (``x * inf`` would be NaN, and warn, at 0)."""
    inf = x * 0.0 + np.inf
    return select(lt(x, 0.0), -inf, inf)


def _erf_inv_f32(x: Any) -> Any:
    w = -log1p(-x * x)
    small = lt(w, 5.0)
    p = select(small, _horner(_ERF_INV_SMALL_W, w - 2.5),
               _horner(_ERF_INV_LARGE_W, sqrt(w) - 3.0))
    # erf_inv(+-1) = +-inf, where the polynomial is indeterminate
    return select(eq(abs(x), 1.0), _signed_inf(x), p * x)


def erf_inv(x: Any) -> Any:
    """The inverse error function: ``erf(erf_inv(x)) == x`` on (-1, 1),
    +-inf at +-1, NaN beyond."""
    t = abstractify(x).element_type
    if t in (PT.F16, PT.BF16):
        return convert_element_type(_erf_inv_f32(convert_element_type(x, PT.F32)), t)
    if t is not PT.F64:
        return _erf_inv_f32(x)
    # f64: the f32 estimate (of x kept inside f32's (-1, 1)), then Newton steps
    # on erf(y) = x.  Near the estimate each step doubles the correct digits;
    # in the tail beyond f32's reach (|x| > 1 - 2^-24, y up to 5.9) erf is
    # concave, so steps of about 1/(2y) climb to the root without overshoot.
    limit = 1.0 - 2.0 ** -23
    inside = clamp(-limit, x, limit)
    y = convert_element_type(_erf_inv_f32(convert_element_type(inside, PT.F32)), PT.F64)
    for _ in range(_NEWTON_STEPS):
        y = y - (erf(y) - x) * (np.sqrt(np.pi) / 2) * exp(y * y)
    y = select(eq(abs(x), 1.0), _signed_inf(x), y)
    return select(gt(abs(x), 1.0), x * 0.0 + np.nan, y)
