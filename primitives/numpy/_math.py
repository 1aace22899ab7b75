"""NumPy-style layer: element-wise math (``sin``, ``abs``, ``clip``, ``power``,
``remainder``, bitwise and logical ops...) and the Python operators ``%``,
``**``, ``//``, ``abs()``, ``~``, ``&``, ``|``, ``^``, ``<<``, ``>>`` of
traced values.

Functions broadcast like NumPy and promote like JAX (Python scalars are
weak); transcendental functions of integers and booleans compute in f32.
Where NumPy and XLA differ on integers, the XLA value wins (``x % 0`` is
``x``, ``x // 0`` is -1, shifts past the bit width follow XLA's shifts).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numxla.tracer import core
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from ._core import _binary, _broadcast_all, _to_inexact, true_divide
from .._util import element_type as _kind

__all__ = [
    "abs", "absolute", "sign", "sqrt", "rsqrt", "cbrt", "square", "reciprocal",
    "sin", "cos", "tan", "arctan2", "sinh", "cosh", "expm1", "log1p",
    "floor", "ceil", "round", "around", "rint", "trunc", "clip", "power", "remainder", "mod",
    "fmod", "floor_divide", "logical_and", "logical_or", "logical_xor", "logical_not",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_invert", "invert",
    "left_shift", "right_shift", "isfinite", "isnan", "isinf", "real", "imag", "conj",
    "conjugate",
]


def _inexact_unary(lax_fn, name: str):
    def fn(x: Any) -> Any:
        return lax_fn(_to_inexact(x))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}`` (integers compute in f32)."
    return fn



sqrt = _inexact_unary(ew.sqrt, "sqrt")
rsqrt = _inexact_unary(ew.rsqrt, "rsqrt")
cbrt = _inexact_unary(ew.cbrt, "cbrt")
sin = _inexact_unary(ew.sin, "sin")
cos = _inexact_unary(ew.cos, "cos")
tan = _inexact_unary(ew.tan, "tan")
expm1 = _inexact_unary(ew.expm1, "expm1")
log1p = _inexact_unary(ew.log1p, "log1p")


def arctan2(y: Any, x: Any) -> Any:
    """The angle of (x, y), broadcasting (integers compute in f32)."""
    y, x = ew.promote(y, x)
    return ew.atan2(*_broadcast_all(_to_inexact(y), _to_inexact(x)))


def sinh(x: Any) -> Any:
    """(e^x - e^-x) / 2, from ``expm1`` so that small x keep their precision."""
    x = _to_inexact(x)
    return ew.mul(ew.sub(ew.expm1(x), ew.expm1(ew.neg(x))), 0.5)


def cosh(x: Any) -> Any:
    """(e^x + e^-x) / 2."""
    x = _to_inexact(x)
    return ew.mul(ew.add(ew.exp(x), ew.exp(ew.neg(x))), 0.5)


def abs(x: Any) -> Any:
    """|x| (a real for complex x); unsigned integers and booleans are their own."""
    t = _kind(x)
    if t is PT.PRED or t.is_unsigned:
        return x
    return ew.abs(x)


absolute = abs


def sign(x: Any) -> Any:
    """-1, 0 or 1 (``sign(-0.0)`` is -0.0 and NaN stays NaN, as in XLA)."""
    t = _kind(x)
    if t is PT.PRED:
        return x
    if t.is_unsigned:
        return ew.convert_element_type(ew.ne(x, 0), t)
    return ew.sign(x)


def square(x: Any) -> Any:
    return ew.mul(x, x)


def reciprocal(x: Any) -> Any:
    """1 / x (integers divide as floats, as in ``jax.numpy``)."""
    return true_divide(1, x)


def floor(x: Any) -> Any:
    return ew.floor(x) if _kind(x).is_floating else x


def ceil(x: Any) -> Any:
    return ew.ceil(x) if _kind(x).is_floating else x


def trunc(x: Any) -> Any:
    """Round toward zero."""
    if not _kind(x).is_floating:
        return x
    return ew.select(ew.lt(x, 0), ew.ceil(x), ew.floor(x))


def rint(x: Any) -> Any:
    """Round half to even."""
    return ew.round_nearest_even(x) if _kind(x).is_floating else x


def round(x: Any, decimals: int = 0) -> Any:
    """NumPy's ``round``: half to even, at ``decimals`` decimal places (integers
    with negative ``decimals`` round through f64)."""
    t = _kind(x)
    if t.is_complex:
        return ew.complex(round(ew.real(x), decimals), round(ew.imag(x), decimals))
    if not t.is_floating:
        if decimals >= 0 or t is PT.PRED:
            return x
        return ew.convert_element_type(round(ew.convert_element_type(x, PT.F64), decimals), t)
    if decimals == 0:
        return ew.round_nearest_even(x)
    if decimals > 0:  # as NumPy: scale up, round, scale back
        scale = 10.0 ** decimals
        return ew.div(ew.round_nearest_even(ew.mul(x, scale)), scale)
    scale = 10.0 ** -decimals
    return ew.mul(ew.round_nearest_even(ew.div(x, scale)), scale)


around = round


def clip(a: Any, a_min: Any = None, a_max: Any = None, *, min: Any = None, max: Any = None
         ) -> Any:
    """``minimum(maximum(a, a_min), a_max)``; either bound may be None."""
    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    if lo is not None:
        a = _binary(ew.max)(a, lo)
    if hi is not None:
        a = _binary(ew.min)(a, hi)
    return a


def power(x: Any, y: Any) -> Any:
    """x ** y; integer powers wrap and negative integer exponents give 0
    (1 for base 1, +-1 for base -1)."""
    return _binary(ew.pow)(x, y)


def fmod(x: Any, y: Any) -> Any:
    """C's remainder: the sign of the dividend (XLA's ``rem``)."""
    return _binary(ew.rem)(x, y)


def remainder(x: Any, y: Any) -> Any:
    """NumPy's floor-mod: the sign of the divisor, from XLA's truncating ``rem``;
    an integer ``x % 0`` is 0, as JAX's and NumPy's (XLA's ``rem`` gives ``x``)."""
    x, y = _broadcast_all(*ew.promote(x, y))
    r = ew.rem(x, y)
    if not _kind(r).is_unsigned:
        wrong_sign = ew.bitwise_and(ew.ne(r, 0), ew.ne(ew.lt(r, 0), ew.lt(y, 0)))
        r = ew.select(wrong_sign, ew.add(r, y), r)
    if _kind(r).is_integral:
        r = ew.select(ew.eq(y, 0), ew.sub(r, r), r)
    return r


mod = remainder


def floor_divide(x: Any, y: Any) -> Any:
    """NumPy's ``//``: the quotient rounded toward -inf.  For integers JAX's
    rule: XLA's truncating quotient, less 1 where the signs of ``x`` and ``y``
    differ and the remainder is not 0 (so ``x // 0`` is -2 for ``x`` not 0,
    and -1 for 0: XLA's quotient by zero is -1)."""
    x, y = _broadcast_all(*ew.promote(x, y))
    t = _kind(x)
    if t is PT.PRED:
        raise TypeError("floor_divide is not defined for booleans")
    if t.is_unsigned:
        return ew.div(x, y)
    if t.is_integral:
        q, r = ew.div(x, y), ew.rem(x, y)
        adjust = ew.bitwise_and(ew.ne(r, 0), ew.ne(ew.sign(x), ew.sign(y)))
        return ew.select(adjust, ew.sub(q, 1), q)
    if t.is_complex:
        raise TypeError("floor_divide is not defined for complex numbers")
    # NumPy's float algorithm: from fmod, so that e.g. 1.0 // 0.1 is 9.0
    m = ew.rem(x, y)
    q = ew.div(ew.sub(x, m), y)
    q = ew.select(ew.bitwise_and(ew.ne(m, 0), ew.ne(ew.lt(y, 0), ew.lt(m, 0))), ew.sub(q, 1), q)
    fq = ew.floor(q)
    fq = ew.select(ew.gt(ew.sub(q, fq), 0.5), ew.add(fq, 1), fq)
    fq = ew.select(ew.eq(q, 0), ew.mul(ew.div(x, y), 0.0), fq)  # a signed zero
    return ew.select(ew.eq(y, 0), ew.div(x, y), fq)


def _as_pred(x: Any) -> Any:
    return x if _kind(x) is PT.PRED else ew.ne(x, ew.convert_element_type(0, _kind(x)))


def logical_and(x: Any, y: Any) -> Any:
    return ew.bitwise_and(*_broadcast_all(_as_pred(x), _as_pred(y)))


def logical_or(x: Any, y: Any) -> Any:
    return ew.bitwise_or(*_broadcast_all(_as_pred(x), _as_pred(y)))


def logical_xor(x: Any, y: Any) -> Any:
    return ew.bitwise_xor(*_broadcast_all(_as_pred(x), _as_pred(y)))


def logical_not(x: Any) -> Any:
    return ew.bitwise_not(_as_pred(x))


def _integral_only(name: str, x: Any) -> None:
    if not (_kind(x).is_integral or _kind(x) is PT.PRED):
        raise TypeError(f"{name} is only defined for integers and booleans, got "
                        f"{_kind(x).short_name}")


def _bitwise(lax_fn, name: str):
    def fn(x: Any, y: Any) -> Any:
        x, y = ew.promote(x, y)
        _integral_only(name, x)
        return lax_fn(*_broadcast_all(x, y))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}``, broadcasting."
    return fn


bitwise_and = _bitwise(ew.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(ew.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(ew.bitwise_xor, "bitwise_xor")
left_shift = _bitwise(ew.shift_left, "left_shift")


def right_shift(x: Any, y: Any) -> Any:
    """``>>``: arithmetic for signed integers, logical for unsigned ones."""
    x, y = ew.promote(x, y)
    _integral_only("right_shift", x)
    shift = ew.shift_right_logical if _kind(x).is_unsigned else ew.shift_right_arithmetic
    return shift(*_broadcast_all(x, y))


def bitwise_not(x: Any) -> Any:
    _integral_only("bitwise_not", x)
    return ew.bitwise_not(x)


bitwise_invert = invert = bitwise_not


def isfinite(x: Any) -> Any:
    t = _kind(x)
    if t.is_complex:
        return ew.bitwise_and(ew.is_finite(ew.real(x)), ew.is_finite(ew.imag(x)))
    if t.is_floating:
        return ew.is_finite(x)
    return _true_like(x)


def isnan(x: Any) -> Any:
    return ew.ne(x, x) if _kind(x).is_floating or _kind(x).is_complex else _false_like(x)


def isinf(x: Any) -> Any:
    t = _kind(x)
    if t.is_complex:
        return ew.bitwise_or(isinf(ew.real(x)), isinf(ew.imag(x)))
    if t.is_floating:
        return ew.eq(ew.abs(x), np.inf)
    return _false_like(x)


def _false_like(x: Any) -> Any:
    return ew.ne(x, x)  # integers equal themselves


def _true_like(x: Any) -> Any:
    return ew.eq(x, x)


def real(x: Any) -> Any:
    return ew.real(x) if _kind(x).is_complex or _kind(x).is_floating else x


def imag(x: Any) -> Any:
    t = _kind(x)
    if t.is_complex or t.is_floating:
        return ew.imag(x)
    return ew.sub(x, x) if t is not PT.PRED else ew.bitwise_and(x, False)


def conj(x: Any) -> Any:
    """The complex conjugate (real values are their own)."""
    if not _kind(x).is_complex:
        return x
    return ew.complex(ew.real(x), ew.neg(ew.imag(x)))


conjugate = conj


# --------------------------------------------------------------------------
# operators of traced values
# --------------------------------------------------------------------------

def _swap(fn):
    return lambda self, other: fn(other, self)


core.OPERATORS.update({
    "__mod__": remainder, "__rmod__": _swap(remainder),
    "__pow__": power, "__rpow__": _swap(power),
    "__floordiv__": floor_divide, "__rfloordiv__": _swap(floor_divide),
    "__abs__": abs, "__invert__": bitwise_not,
    "__and__": bitwise_and, "__rand__": _swap(bitwise_and),
    "__or__": bitwise_or, "__ror__": _swap(bitwise_or),
    "__xor__": bitwise_xor, "__rxor__": _swap(bitwise_xor),
    "__lshift__": left_shift, "__rshift__": right_shift,
    "__rlshift__": _swap(left_shift), "__rrshift__": _swap(right_shift),
    "attr:conj": lambda x: lambda: conj(x),
    "attr:conjugate": lambda x: lambda: conj(x),
    "attr:real": lambda x: real(x),
    "attr:imag": lambda x: imag(x),
    "attr:round": lambda x: lambda decimals=0: round(x, decimals),
    "attr:clip": lambda x: lambda min=None, max=None: clip(x, min, max),
})
