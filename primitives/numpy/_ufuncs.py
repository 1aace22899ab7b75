"""NumPy-style layer: element-wise functions beyond ``_math``'s.

Inverse trigonometric and hyperbolic functions (JAX's formulas on
``atan2``/``log1p``, complex ones from logarithms), ``hypot``,
``logaddexp``, ``copysign``, ``frexp``/``ldexp``/``nextafter``/``spacing``/
``signbit`` (on the bits of the float), ``gcd``/``lcm`` (Euclid in a
``while_loop``), ``i0`` (Cephes' Chebyshev series, as NumPy's), ``sinc``.
Functions broadcast and promote like NumPy under JAX's rules; integers and
booleans compute in f32 where the result is inexact.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from ..control_flow import while_loop
from ..elementwise_bits import bitcast_convert_type, population_count
from ..reductions import reduce_or
from ._core import _arraylike, _broadcast_all, _to_inexact, where
from ._math import abs as _abs, floor_divide, isinf, isnan, left_shift, power, remainder, \
    right_shift, trunc
from .._util import element_type as _kind

__all__ = [
    "arccos", "acos", "arcsin", "asin", "arctan", "atan", "arccosh", "acosh", "arcsinh", "asinh",
    "arctanh", "atanh", "atan2", "angle", "copysign", "deg2rad", "radians", "rad2deg", "degrees",
    "exp2", "log2", "log10", "logaddexp", "logaddexp2", "fabs", "float_power", "fmax", "fmin",
    "frexp", "ldexp", "modf", "gcd", "lcm", "heaviside", "hypot", "i0", "nextafter", "spacing",
    "signbit", "sinc", "positive", "pow", "divmod", "bitwise_count", "bitwise_left_shift",
    "bitwise_right_shift",
]



def _c(value: Any, like: Any) -> Any:
    """A scalar constant of ``like``'s element type."""
    return ew.convert_element_type(value, _kind(like))


def _pair(x: Any, y: Any, inexact: bool = True) -> list[Any]:
    """Promoted, broadcast operands (inexact ones if ``inexact``)."""
    x, y = ew.promote(_arraylike(x), _arraylike(y))
    if inexact:
        x, y = _to_inexact(x), _to_inexact(y)
    return _broadcast_all(x, y)


def _unary(name: str, real_fn, complex_fn=None):
    def fn(x: Any) -> Any:
        x = _to_inexact(_arraylike(x))
        if _kind(x).is_complex:
            if complex_fn is None:
                raise TypeError(f"{name} is not defined for complex numbers")
            return complex_fn(x)
        return real_fn(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}`` (integers compute in f32)."
    return fn


def _i(x: Any) -> Any:
    """The imaginary unit times ``x`` (complex)."""
    return ew.complex(ew.neg(ew.imag(x)), ew.real(x))


def _neg_i(x: Any) -> Any:
    return ew.complex(ew.imag(x), ew.neg(ew.real(x)))


def _sqrt_one_minus_square(x: Any) -> Any:
    return ew.sqrt(ew.sub(_c(1, x), ew.mul(x, x)))


# -- inverse trigonometric and hyperbolic functions ---------------------------------------------

def _acos(x):
    """JAX's ``2 atan2(sqrt(1 - x^2), 1 + x)``; pi at -1."""
    out = ew.mul(ew.atan2(_sqrt_one_minus_square(x), ew.add(_c(1, x), x)), _c(2, x))
    return where(ew.eq(x, _c(-1, x)), _c(np.pi, x), out)


def _asin(x):
    """JAX's ``2 atan2(x, 1 + sqrt(1 - x^2))``."""
    return ew.mul(ew.atan2(x, ew.add(_c(1, x), _sqrt_one_minus_square(x))), _c(2, x))


def _asinh(x):
    """``sign(x) log1p(a + a^2 / (1 + sqrt(1 + a^2)))``, a = |x|; ``log(2a)`` when
    ``a^2`` would overflow."""
    a = ew.abs(x)
    big = ew.gt(a, _c(math.sqrt(float(np.finfo(_kind(x).numpy_dtype).max)) / 2, x)) \
        if _kind(x) is not PT.BF16 else ew.gt(a, _c(1e18, x))
    safe = where(big, _c(1, x), a)
    small = ew.log1p(ew.add(safe, ew.div(ew.mul(safe, safe),
                                         ew.add(_c(1, x), ew.sqrt(ew.add(_c(1, x),
                                                                         ew.mul(safe, safe)))))))
    out = where(big, ew.add(ew.log(a), _c(math.log(2), x)), small)
    return where(ew.lt(x, _c(0, x)), ew.neg(out), out)


def _acosh(x):
    """``log1p(y + sqrt(y (x + 1)))`` with ``y = x - 1``; ``log(2x)`` for huge x."""
    big = ew.gt(x, _c(1e18, x))
    safe = where(big, _c(2, x), x)
    y = ew.sub(safe, _c(1, x))
    small = ew.log1p(ew.add(y, ew.sqrt(ew.mul(y, ew.add(safe, _c(1, x))))))
    return where(big, ew.add(ew.log(x), _c(math.log(2), x)), small)


def _atanh(x):
    """``log1p(2x / (1 - x)) / 2``."""
    return ew.mul(ew.log1p(ew.div(ew.mul(x, _c(2, x)), ew.sub(_c(1, x), x))), _c(0.5, x))


def _one(z):
    return _c(1, z)


arccos = acos = _unary("arccos", _acos, lambda z: _neg_i(ew.log(ew.add(
    z, _i(ew.sqrt(ew.sub(_one(z), ew.mul(z, z))))))))
arcsin = asin = _unary("arcsin", _asin, lambda z: _neg_i(ew.log(ew.add(
    _i(z), ew.sqrt(ew.sub(_one(z), ew.mul(z, z)))))))
arctan = atan = _unary("arctan", lambda x: ew.atan2(x, _c(1, x)), lambda z: ew.mul(
    _i(ew.sub(ew.log1p(_neg_i(z)), ew.log1p(_i(z)))), _c(0.5, z)))
arcsinh = asinh = _unary("arcsinh", _asinh, lambda z: ew.log(ew.add(
    z, ew.sqrt(ew.add(ew.mul(z, z), _one(z))))))
arccosh = acosh = _unary("arccosh", _acosh, lambda z: ew.log(ew.add(
    z, ew.mul(ew.sqrt(ew.add(z, _one(z))), ew.sqrt(ew.sub(z, _one(z)))))))
arctanh = atanh = _unary("arctanh", _atanh, lambda z: ew.mul(
    ew.sub(ew.log1p(z), ew.log1p(ew.neg(z))), _c(0.5, z)))


def atan2(x1: Any, x2: Any) -> Any:
    """The angle of (x2, x1) (``arctan2``'s array API name)."""
    return ew.atan2(*_pair(x1, x2))


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of a complex number (0 or pi for reals), in degrees if ``deg``."""
    z = _to_inexact(_arraylike(z))
    if _kind(z).is_complex:
        out = ew.atan2(ew.imag(z), ew.real(z))
    else:
        out = ew.atan2(broadcast_one(_c(0, z), z), z)
    return ew.mul(out, _c(180 / np.pi, out)) if deg else out


deg2rad = radians = _unary("deg2rad", lambda x: ew.mul(x, _c(np.pi / 180, x)))
rad2deg = degrees = _unary("rad2deg", lambda x: ew.mul(x, _c(180 / np.pi, x)))
exp2 = _unary("exp2", lambda x: ew.pow(_c(2, x), x), lambda z: ew.exp(
    ew.mul(z, _c(math.log(2), z))))
log2 = _unary("log2", lambda x: ew.div(ew.log(x), _c(math.log(2), x)),
              lambda z: ew.div(ew.log(z), _c(math.log(2), z)))
log10 = _unary("log10", lambda x: ew.div(ew.log(x), _c(math.log(10), x)),
               lambda z: ew.div(ew.log(z), _c(math.log(10), z)))
fabs = _unary("fabs", ew.abs)


def positive(x: Any) -> Any:
    """``+x``."""
    return _arraylike(x)


pow = power  # noqa: A001 (the array API's name)


def _with_jvp(fn: Any, jvp: Any) -> Any:
    """``fn`` with ``jvp(primals, tangents)`` as its derivative (autodiff's
    ``custom_jvp``, made on the first call: autodiff imports this package)."""
    custom: list[Any] = []

    def public(*args: Any) -> Any:
        if not custom:
            from numxla.autodiff.custom import custom_jvp
            custom.append(custom_jvp(fn))
            custom[0].defjvp(jvp)
        return custom[0](*args)
    public.__name__ = public.__qualname__ = fn.__name__
    public.__doc__ = fn.__doc__
    return public


def _replace_inf(x: Any) -> Any:
    return where(ew.eq(x, _c(np.inf, x)), _c(0, x), x)


def _logaddexp(x1: Any, x2: Any) -> Any:
    amax = ew.max(x1, x2)
    delta = ew.sub(x1, x2)
    out = ew.add(amax, ew.log1p(ew.exp(ew.neg(ew.abs(delta)))))
    return where(isnan(delta), ew.add(x1, x2), out)  # equal infinities


def _logaddexp_jvp(primals: Any, tangents: Any) -> Any:
    """JAX's: ``t1 * exp(x1 - out) + t2 * exp(x2 - out)`` (each operand's
    softmax weight, so ties share the derivative equally)."""
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp_public(x1, x2)
    w1 = ew.exp(ew.sub(_replace_inf(x1), _replace_inf(out)))
    w2 = ew.exp(ew.sub(_replace_inf(x2), _replace_inf(out)))
    return out, ew.add(ew.mul(t1, w1), ew.mul(t2, w2))


_logaddexp_public = _with_jvp(_logaddexp, _logaddexp_jvp)


def logaddexp(x1: Any, x2: Any) -> Any:
    """``log(exp(x1) + exp(x2))`` around the larger operand (JAX's derivative)."""
    return _logaddexp_public(*_pair(x1, x2))


def logaddexp2(x1: Any, x2: Any) -> Any:
    """``log2(2**x1 + 2**x2)`` around the larger operand."""
    x1, x2 = _pair(x1, x2)
    amax = ew.max(x1, x2)
    delta = ew.sub(x1, x2)
    tail = ew.div(ew.log1p(ew.pow(_c(2, delta), ew.neg(ew.abs(delta)))), _c(math.log(2), delta))
    return where(isnan(delta), ew.add(x1, x2), ew.add(amax, tail))


def float_power(x1: Any, x2: Any) -> Any:
    """``x1 ** x2`` in an inexact type (JAX's: f32 for integers)."""
    return ew.pow(*_pair(x1, x2))


def _nan_aware(choose):
    def fn(x1: Any, x2: Any) -> Any:
        x1, x2 = _pair(x1, x2, inexact=False)
        out = choose(x1, x2)
        if _kind(x1).is_floating or _kind(x1).is_complex:
            out = where(isnan(x2), x1, where(isnan(x1), x2, out))
        return out
    return fn


fmax = _nan_aware(ew.max)
fmax.__name__, fmax.__doc__ = "fmax", "The element-wise maximum, ignoring NaNs."
fmin = _nan_aware(ew.min)
fmin.__name__, fmin.__doc__ = "fmin", "The element-wise minimum, ignoring NaNs."


def heaviside(x1: Any, x2: Any) -> Any:
    """0 where ``x1 < 0``, 1 where ``x1 > 0``, ``x2`` where ``x1 == 0``."""
    x1, x2 = _pair(x1, x2)
    return where(ew.lt(x1, _c(0, x1)), _c(0, x1), where(ew.gt(x1, _c(0, x1)), _c(1, x1), x2))


def hypot(x1: Any, x2: Any) -> Any:
    """``sqrt(x1^2 + x2^2)`` without overflow (scaled by the larger magnitude)."""
    x1, x2 = _pair(x1, x2)
    a, b = ew.abs(x1), ew.abs(x2)
    big, small = ew.max(a, b), ew.min(a, b)
    zero = ew.eq(big, _c(0, big))
    ratio = ew.div(small, where(zero, _c(1, big), big))
    out = where(zero, _c(0, big), ew.mul(big, ew.sqrt(ew.add(_c(1, big), ew.mul(ratio, ratio)))))
    return where(ew.bitwise_or(isinf(x1), isinf(x2)), _c(np.inf, big), out)


def copysign(x1: Any, x2: Any) -> Any:
    """``|x1|`` with the sign (bit) of ``x2``."""
    x1, x2 = _pair(x1, x2)
    magnitude = ew.abs(x1)
    return where(signbit(x2), ew.neg(magnitude), magnitude)


def sinc(x: Any) -> Any:
    """``sin(pi x) / (pi x)``, 1 at 0 (with a zero derivative there)."""
    x = _to_inexact(_arraylike(x))
    zero = ew.eq(x, _c(0, x))
    px = ew.mul(where(zero, _c(1, x), x), _c(np.pi, x))
    return where(zero, _c(1, x), ew.div(ew.sin(px), px))


# -- the bits of floats ------------------------------------------------------------------------

# float type -> (integer type of its width, mantissa bits, exponent bias)
_BITS = {PT.F16: (PT.S16, 10, 15), PT.BF16: (PT.S16, 7, 127), PT.F32: (PT.S32, 23, 127),
         PT.F64: (PT.S64, 52, 1023)}


def signbit(x: Any) -> Any:
    """Whether the sign bit is set (true for -0.0; integers: ``x < 0``)."""
    x = _arraylike(x)
    t = _kind(x)
    if t is PT.PRED or t.is_unsigned:
        return ew.ne(x, x) if t is PT.PRED else ew.lt(x, _c(0, x))
    if t.is_integral:
        return ew.lt(x, _c(0, x))
    if t.is_complex:
        raise TypeError("signbit is not defined for complex numbers")
    int_t = _BITS[t][0]
    return ew.lt(bitcast_convert_type(x, int_t), ew.convert_element_type(0, int_t))


def frexp(x: Any) -> tuple[Any, Any]:
    """``(mantissa, exponent)`` with ``x = mantissa * 2**exponent``, ``|mantissa|``
    in [0.5, 1) (0, inf and NaN come back as mantissa with exponent 0); the
    exponent is s32."""
    x = _to_inexact(_arraylike(x))
    t = _kind(x)
    if t.is_complex:
        raise TypeError("frexp is not defined for complex numbers")
    int_t, mant, bias = _BITS[t]
    subnormal = ew.lt(ew.abs(x), _c(float(2.0 ** (1 - bias)), x))
    scaled = where(subnormal, ew.mul(x, _c(float(2.0 ** mant), x)), x)
    bits = bitcast_convert_type(scaled, int_t)
    exp_mask = _exponent_mask(int_t, mant)
    biased = ew.shift_right_logical(ew.bitwise_and(bits, exp_mask),
                                    ew.convert_element_type(mant, int_t))
    exponent = ew.sub(biased, ew.convert_element_type(bias - 1, int_t))
    mantissa_bits = ew.bitwise_or(ew.bitwise_and(bits, ew.bitwise_not(exp_mask)),
                                  ew.convert_element_type((bias - 1) << mant, int_t))
    mantissa = bitcast_convert_type(mantissa_bits, t)
    exponent = ew.convert_element_type(exponent, PT.S32)
    exponent = where(subnormal, ew.sub(exponent, np.int32(mant)), exponent)
    special = ew.bitwise_or(ew.eq(x, _c(0, x)), ew.bitwise_or(isinf(x), isnan(x)))
    return where(special, x, mantissa), where(special, np.int32(0), exponent)


def _width(t: PT) -> int:
    return t.bit_width


def _exponent_mask(int_t: PT, mant: int) -> Any:
    exp_bits = _width(int_t) - 1 - mant
    return ew.convert_element_type(np.asarray(((1 << exp_bits) - 1) << mant).astype(
        int_t.numpy_dtype), int_t)


def ldexp(x1: Any, x2: Any) -> Any:
    """``x1 * 2**x2`` (``x2`` integers), as two exact power-of-two scalings so
    that intermediate powers do not overflow."""
    x1 = _to_inexact(_arraylike(x1))
    x2 = _arraylike(x2)
    if not (_kind(x2).is_integral or _kind(x2) is PT.PRED):
        raise TypeError("ldexp: the exponent must be an integer")
    x1, x2 = _broadcast_all(x1, x2)
    half = floor_divide(x2, ew.convert_element_type(2, _kind(x2)))
    rest = ew.sub(x2, half)
    two = _c(2, x1)
    return ew.mul(ew.mul(x1, ew.pow(two, ew.convert_element_type(half, _kind(x1)))),
                  ew.pow(two, ew.convert_element_type(rest, _kind(x1))))


def nextafter(x1: Any, x2: Any) -> Any:
    """The next representable float after ``x1`` towards ``x2`` (on the bits)."""
    x1, x2 = _pair(x1, x2)
    t = _kind(x1)
    int_t = _BITS[t][0]
    bits = bitcast_convert_type(x1, int_t)
    one = ew.convert_element_type(1, int_t)
    away_from_zero = ew.eq(ew.gt(x2, x1), ew.gt(x1, _c(0, x1)))
    stepped = bitcast_convert_type(where(away_from_zero, ew.add(bits, one), ew.sub(bits, one)), t)
    tiny = bitcast_convert_type(broadcast_one(one, x1), t)  # the smallest subnormal
    from_zero = where(ew.gt(x2, x1), tiny, ew.neg(tiny))
    out = where(ew.eq(x1, _c(0, x1)), from_zero, stepped)
    out = where(ew.eq(x1, x2), x2, out)
    return where(ew.bitwise_or(isnan(x1), isnan(x2)), ew.add(x1, x2), out)


def broadcast_one(one: Any, like: Any) -> Any:
    from ._core import broadcast_to
    return broadcast_to(one, abstractify(like).dimensions)


def spacing(x: Any) -> Any:
    """The distance from ``x`` to the next float away from zero (NumPy's)."""
    x = _to_inexact(_arraylike(x))
    toward = where(signbit(x), _c(-np.inf, x), _c(np.inf, x))
    return ew.sub(nextafter(x, toward), x)


def modf(x: Any) -> tuple[Any, Any]:
    """``(fractional part, integral part)``, both with ``x``'s sign (infinities
    have fractional part 0, as in NumPy)."""
    x = _to_inexact(_arraylike(x))
    whole = trunc(x)
    frac = ew.sub(x, whole)
    return where(isinf(x), copysign(_c(0, x), x), frac), whole


def divmod(x1: Any, x2: Any) -> tuple[Any, Any]:  # noqa: A001 (NumPy's name)
    """``(x1 // x2, x1 % x2)``."""
    return floor_divide(x1, x2), remainder(x1, x2)


# -- integers ----------------------------------------------------------------------------------

def gcd(x1: Any, x2: Any) -> Any:
    """The greatest common divisor of integers (Euclid's algorithm, element-wise,
    until every remainder is 0)."""
    x1, x2 = _pair(x1, x2, inexact=False)
    if not _kind(x1).is_integral:
        raise TypeError("gcd is only defined for integers")
    a, b = _abs(x1), _abs(x2)
    zero = _c(0, a)

    def cond(carry):
        return reduce_or(ew.ne(carry[1], zero), tuple(range(abstractify(a).ndim)))

    def body(carry):
        a, b = carry
        nonzero = ew.ne(b, zero)
        safe = where(nonzero, b, _c(1, b))
        return where(nonzero, b, a), where(nonzero, ew.rem(a, safe), zero)

    return while_loop(cond, body, (a, b))[0]


def lcm(x1: Any, x2: Any) -> Any:
    """The least common multiple of integers: ``|x1 // gcd * x2|`` (0 if either is 0)."""
    x1, x2 = _pair(x1, x2, inexact=False)
    g = gcd(x1, x2)
    zero = ew.eq(g, _c(0, g))
    out = _abs(ew.mul(ew.div(x1, where(zero, _c(1, g), g)), x2))
    return where(zero, _c(0, g), out)


def bitwise_count(x: Any) -> Any:
    """The number of 1 bits of ``|x|`` (u8)."""
    x = _arraylike(x)
    t = _kind(x)
    if not (t.is_integral or t is PT.PRED):
        raise TypeError("bitwise_count is only defined for integers and booleans")
    if t is PT.PRED:
        return ew.convert_element_type(x, PT.U8)
    return ew.convert_element_type(population_count(_abs(x)), PT.U8)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


# -- Bessel i0 ---------------------------------------------------------------------------------

def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0: ``exp(|x|)``
    times ``lax.bessel_i0e`` (Cephes' Chebyshev series), as JAX computes it."""
    from .. import special
    x = _to_inexact(_arraylike(x))
    if _kind(x).is_complex:
        raise TypeError("i0 is not defined for complex numbers")
    return ew.mul(ew.exp(ew.abs(x)), special.bessel_i0e(x))
