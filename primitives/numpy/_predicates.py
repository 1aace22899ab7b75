"""NumPy-style layer: predicates and comparisons of whole arrays.

``isclose``/``allclose`` (NumPy's tolerances; infinities equal only
themselves), ``array_equal``/``array_equiv``, the element kinds
``isposinf``/``isneginf``/``iscomplex``/``isreal``, and ``nan_to_num``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numxla.tracer.core import abstractify

from .. import elementwise as ew
from ..reductions import reduce_and
from ._core import _arraylike, _broadcast_all, broadcast_shapes, broadcast_to, where
from ._math import isinf, isnan
from .._util import element_type as _kind

__all__ = ["isclose", "allclose", "array_equal", "array_equiv", "isneginf", "isposinf",
           "iscomplex", "isreal", "nan_to_num"]



def _c(value: Any, like: Any) -> Any:
    return ew.convert_element_type(value, _kind(like))


def _pair(x: Any, y: Any) -> list[Any]:
    return _broadcast_all(*ew.promote(_arraylike(x), _arraylike(y)))


def isclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
            ) -> Any:
    """``|a - b| <= atol + rtol |b|`` element-wise (infinities equal only
    themselves; NaNs equal if ``equal_nan``); integers compare exactly."""
    a, b = _pair(a, b)
    t = _kind(a)
    if not (t.is_floating or t.is_complex):
        return ew.eq(a, b)
    real_t = ew.abs(a)
    tol = ew.add(_c(atol, real_t), ew.mul(_c(rtol, real_t), ew.abs(b)))
    close = ew.le(ew.abs(ew.sub(a, b)), tol)
    infinite = ew.bitwise_or(isinf(a), isinf(b))
    close = where(infinite, ew.eq(a, b), close)
    if equal_nan:
        close = ew.bitwise_or(close, ew.bitwise_and(isnan(a), isnan(b)))
    return close


def _all(x: Any) -> Any:
    return reduce_and(x, tuple(range(abstractify(x).ndim)))


def allclose(a: Any, b: Any, rtol: Any = 1e-05, atol: Any = 1e-08, equal_nan: bool = False
             ) -> Any:
    """Whether ``isclose`` holds everywhere (a boolean scalar)."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """Whether the arrays have the same shape and elements."""
    a1, a2 = _arraylike(a1), _arraylike(a2)
    if abstractify(a1).dimensions != abstractify(a2).dimensions:
        return np.bool_(False)
    a1, a2 = ew.promote(a1, a2)
    same = ew.eq(a1, a2)
    if equal_nan and (_kind(a1).is_floating or _kind(a1).is_complex):
        same = ew.bitwise_or(same, ew.bitwise_and(isnan(a1), isnan(a2)))
    return _all(same)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether the arrays broadcast together and are equal everywhere."""
    a1, a2 = _arraylike(a1), _arraylike(a2)
    try:
        broadcast_shapes(abstractify(a1).dimensions, abstractify(a2).dimensions)
    except ValueError:
        return np.bool_(False)
    return _all(ew.eq(*_broadcast_all(*ew.promote(a1, a2))))


def isposinf(x: Any) -> Any:
    x = _arraylike(x)
    return ew.eq(x, _c(np.inf, x)) if _kind(x).is_floating else ew.ne(x, x)


def isneginf(x: Any) -> Any:
    x = _arraylike(x)
    return ew.eq(x, _c(-np.inf, x)) if _kind(x).is_floating else ew.ne(x, x)


def iscomplex(x: Any) -> Any:
    """Where the imaginary part is nonzero."""
    x = _arraylike(x)
    if not _kind(x).is_complex:
        return broadcast_to(np.False_, abstractify(x).dimensions)
    return ew.ne(ew.imag(x), _c(0, ew.imag(x)))


def isreal(x: Any) -> Any:
    """Where the imaginary part is zero."""
    return ew.not_(iscomplex(x))


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """NaN to ``nan``, infinities to ``posinf``/``neginf`` (default: the type's
    largest finite magnitudes); complex parts separately; others unchanged."""
    x = _arraylike(x)
    t = _kind(x)
    if t.is_complex:
        return ew.complex(nan_to_num(ew.real(x), copy, nan, posinf, neginf),
                          nan_to_num(ew.imag(x), copy, nan, posinf, neginf))
    if not t.is_floating:
        return x
    from ._types import finfo
    info = finfo(t)
    hi = float(info.max) if posinf is None else posinf
    lo = -float(info.max) if neginf is None else neginf
    x = where(isnan(x), _c(nan, x), x)
    x = where(ew.eq(x, _c(np.inf, x)), _c(hi, x), x)
    return where(ew.eq(x, _c(-np.inf, x)), _c(lo, x), x)
