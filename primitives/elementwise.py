"""Element-wise operations: XLA's unary and binary element-wise ops, Compare
(with the total-order variants), Select, Clamp, Round and ConvertElementType.
The bit-level ops (shifts, PopulationCount, Clz, BitcastConvertType,
ReducePrecision) live in ``elementwise_bits`` and are re-exported here.

Each op is one row of a table: its name, the element-type kinds it admits,
its reference semantics in NumPy (with XLA's definitions where they differ
from NumPy's, e.g. integer division by zero) and the element type of its
result.  The shape rule is shared: operands of one element type and equal
dimensions, as in HLO.  The user-facing functions promote element types
(Python scalars are weak) and insert ``broadcast_in_dim`` for XLA's implicit
broadcasting: rank-0 operands, size-1 dimensions of operands of equal rank,
and the ``broadcast_dimensions`` form for operands of different rank.

Reference semantics compute f16 and bf16 in f32 and round the result once,
as XLA:CPU does.  bf16 is stored as uint16 words, like u16 (eager bf16 values
are ``tracer.core.BF16Array``, but reference semantics receive plain
arrays), so these are ``tracer.core.TypedPrimitive`` s: the eager interpreter
passes the operands' element types to their reference semantics
(``operand_types``; never recorded in graphs).
"""
from __future__ import annotations

import builtins
import dataclasses
import enum
import functools
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer.core import (AbstractValue, Primitive, ShapeError, TypedPrimitive, abstractify,
                         array_value)
from numxla.tracer.shapes import PrimitiveType as PT, bf16_from_f32, bf16_to_f32

from ._util import as_int_tuple, check_kinds
from .dtypes import canonical_type, result_type

__all__ = [
    # binary arithmetic
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "complex",
    # logical / bitwise
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "and_", "or_", "xor", "not_",
    # unary
    "abs", "ceil", "floor", "cbrt", "cos", "sin", "tan", "erf", "exp", "expm1", "log", "log1p",
    "logistic", "is_finite", "real", "imag", "neg", "sign", "sqrt", "rsqrt", "tanh",
    "round", "round_nearest_even", "RoundingMethod",
    # comparisons, select, clamp, conversion
    "eq", "ne", "lt", "le", "gt", "ge", "compare",
    "eq_total_order", "ne_total_order", "lt_total_order", "le_total_order",
    "gt_total_order", "ge_total_order",
    "select", "clamp", "convert_element_type",
    "UNARY_OPS", "BINARY_OPS", "COMPARISON_DIRECTIONS",
]

NUMERIC = ("signed", "unsigned", "float", "complex")
INEXACT = ("float", "complex")
SIGNED_NUMERIC = ("signed", "float", "complex")
ALL = ("pred",) + NUMERIC
INTEGRAL = ("pred", "signed", "unsigned")
FLOAT = ("float",)


# --------------------------------------------------------------------------
# element types at run time
# --------------------------------------------------------------------------

# Reference semantics of these ops read the operands' element types
# (``operand_types``): bf16 and u16 share their NumPy storage.
ElementwisePrimitive = TypedPrimitive


def types_of(arrays: Sequence[np.ndarray], kinds: Sequence[str],
             operand_types: Sequence[PT] | None) -> tuple[PT, ...]:
    """The operands' element types: given, or read off the arrays' dtypes."""
    if operand_types is not None:
        return tuple(operand_types)
    out = []
    for a in arrays:
        t = PT.from_dtype(np.asarray(a).dtype)
        if t is PT.U16 and "unsigned" not in kinds and "float" in kinds:
            t = PT.BF16
        out.append(t)
    return tuple(out)


def widen(a: np.ndarray, t: PT) -> np.ndarray:
    """The values NumPy computes with: f16 and bf16 as f32."""
    if t is PT.BF16:
        return bf16_to_f32(a)
    if t is PT.F16:
        return np.asarray(a, dtype=np.float32)
    return np.asarray(a)


def narrow(v: Any, t: PT) -> np.ndarray:
    """A computed value as storage of element type ``t`` (f32 rounded to bf16 words)."""
    if t is PT.BF16:
        return bf16_from_f32(np.asarray(v, dtype=np.float32))
    return np.asarray(v).astype(t.numpy_dtype, copy=False)


# --------------------------------------------------------------------------
# reference semantics with XLA's definitions
# --------------------------------------------------------------------------

def _all_ones(dtype: np.dtype) -> np.ndarray:
    return np.invert(np.zeros((), dtype))


def _safe_divisor(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``y`` with the divisions XLA defines specially (by 0, INT_MIN by -1) replaced by 1."""
    special = y == 0
    if x.dtype.kind == "i":
        special = special | ((x == np.iinfo(x.dtype).min) & (y == -1))
    return np.where(special, 1, y).astype(x.dtype)


def _div(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Integers truncate toward zero; ``x / 0`` is -1 (all bits set) and
    ``INT_MIN / -1`` is ``INT_MIN``."""
    if x.dtype.kind not in "iu":
        return np.divide(x, y)
    safe = _safe_divisor(x, y)
    quotient = (x - np.fmod(x, safe)) // safe  # an exact division
    return np.where(y == 0, _all_ones(x.dtype), quotient).astype(x.dtype)


def _rem(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """C's ``fmod``: the result has the dividend's sign; for integers ``x % 0``
    is ``x`` and ``INT_MIN % -1`` is 0."""
    if x.dtype.kind not in "iu":
        return np.fmod(x, y)
    return np.where(y == 0, x, np.fmod(x, _safe_divisor(x, y))).astype(x.dtype)


def _pow(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """IEEE ``pow`` for floats; integers by repeated squaring (wrapping), a
    negative exponent giving 0, except for bases 1 (1) and -1 (-1 or 1)."""
    if x.dtype.kind not in "iu":
        return np.power(x, y)
    result = np.ones_like(x)
    base = np.array(x, copy=True)
    e = np.where(y < 0, 0, y).astype(x.dtype)
    while np.any(e):
        result = np.where(e & 1, result * base, result).astype(x.dtype)
        base = (base * base).astype(x.dtype)
        e = e >> 1
    if x.dtype.kind == "i":
        negative = np.where(x == 1, 1, np.where(x == -1, np.where(y & 1, -1, 1), 0))
        result = np.where(y < 0, negative, result)
    return result.astype(x.dtype)


def _product_error(a: np.ndarray, b: np.ndarray, product: np.ndarray) -> np.ndarray:
    """``a * b - product`` (``product = a * b`` rounded), exact for f64 (Dekker's
    TwoProduct) unless a part overflows or underflows; 0 for other types."""
    if a.dtype != np.float64:
        return np.zeros_like(product)

    def split(x):
        scaled = x * 134217729.0   # 2^27 + 1: x = high + low, 26 bits each
        high = scaled - (scaled - x)
        return high, x - high
    (ah, al), (bh, bl) = split(a), split(b)
    error = ((ah * bh - product) + ah * bl + al * bh) + al * bl
    return np.where(np.isfinite(error), error, 0.0)


def _fma(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` as a fused multiply-add gives it (NumPy has none): the
    product is not rounded on its own, so it never overflows alone.  f32
    through f64 (its products are exact there); f64 with the product's exact
    error (TwoProduct) and the sum's (TwoSum), so to within an ulp; a product
    that overflows is redone at a quarter of the scale, and a finite product
    plus an infinite ``c`` is ``c``."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b + c.astype(np.float64)).astype(np.float32)
    product = a * b
    finite = np.isfinite(a) & np.isfinite(b)
    over = finite & np.isinf(product)
    total = product + c
    back = total - product                                  # TwoSum: what rounding lost
    lost = (product - (total - back)) + (c - back)
    out = np.where(np.isfinite(total), total + (lost + _product_error(a, b, product)), total)
    if over.any():
        big_a = np.abs(a) >= np.abs(b)    # scale the larger factor: exact, no underflow
        quarter = np.where(big_a, a * 0.25, a) * np.where(big_a, b, b * 0.25)
        out = np.where(over, (quarter + c * 0.25) * 4.0, out)
    return np.where(finite & np.isinf(c), c, out)


def _mul(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x * y; complex by XLA:CPU's formula, ``(ac - bd) + (bc + ad)i`` with the
    multiply-adds LLVM contracts, ``re = fma(a, c, -(b d))``, ``im = fma(b, c,
    a d)``: where a part overflows or meets an infinity its value is XLA's,
    not C99's (``(M + Mi)(100 + 3i) = -inf + inf i`` for the largest finite M,
    ``(x + inf i)(y + 0i) = NaN + inf i``)."""
    if x.dtype.kind != "c":
        return np.multiply(x, y)
    a, b, c, d = x.real, x.imag, y.real, y.imag
    return _complex(_fma(a, c, -(b * d)), _fma(b, c, a * d))


def _nan_where_real_not_finite(fn: Callable) -> Callable:
    """``fn`` (NumPy's sin or cos); for complex z with an infinite or NaN real
    part NaN + NaN i, as XLA gives (its sin(Re z) and cos(Re z) factors are
    NaN), where C99 gives e.g. sin(inf - inf i) = NaN +- inf i (sign unspecified)."""
    def semantics(x: np.ndarray) -> np.ndarray:
        out = fn(x)
        if x.dtype.kind != "c":
            return out
        return np.where(np.isfinite(x.real), out, builtins.complex(np.nan, np.nan))
    return semantics


def _logistic(x: np.ndarray, t: PT) -> np.ndarray:
    """XLA's expansion ``1 / (1 + e^-x)``: 0 where e^-x overflows in the
    element type (f32: x < -88.72; f16, whose exp XLA rounds to f16: x < -11.09),
    not the subnormal 1 / (1 + e^-x) computed in f32 would be."""
    e = np.exp(-x)
    out = 1 / (1 + e)
    if t is PT.F16 and x.dtype.kind == "f":
        out = np.where(np.isinf(narrow(e, t).astype(np.float32)), 0, out).astype(out.dtype)
    return out


def _atan2(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    if y.dtype.kind != "c":
        return np.arctan2(y, x)
    # StableHLO's definition for complex operands: -i * log((x + iy) / sqrt(x^2 + y^2))
    return -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))


def _complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast(re, im).shape, np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im  # not re + 1j*im, which turns inf into NaN
    return out


def _logical(numeric: Callable, logical: Callable) -> Callable:
    """``numeric`` for numbers, ``logical`` for pred (StableHLO's add/mul of pred)."""
    return lambda x, y: logical(x, y) if x.dtype == np.bool_ else numeric(x, y)


def _round_afz(x: np.ndarray) -> np.ndarray:
    """Round half away from zero (``x - trunc(x)`` is exact)."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.copysign(1, x), t)


def _sign(x: np.ndarray) -> np.ndarray:
    """-1, -0, NaN, +0 or 1 (XLA's sgn); ``z / |z|`` for complex."""
    if x.dtype.kind in "iu":
        return np.sign(x)
    if x.dtype.kind == "c":
        magnitude = np.abs(x)
        unit = x / np.where(magnitude == 0, 1, magnitude)
        nan = np.isnan(x.real) | np.isnan(x.imag)
        return np.where(nan, np.nan + 1j * np.nan, unit)
    return np.where(np.isnan(x) | (x == 0), x, np.copysign(1, x))


def _abs(x: np.ndarray) -> np.ndarray:
    return np.abs(x)  # wraps for INT_MIN, as XLA does


def _cbrt(x: np.ndarray) -> np.ndarray:
    """The real cube root; for complex z the principal one, |z|^(1/3) cis(arg z / 3)
    (zeros kept), the polar form XLA's emitter builds (XLA:CPU's shape inference
    rejects complex cbrt; StableHLO allows it), not exp(log(z) / 3), which is
    hundreds of ulps off where |log z| is large; |z| / 8 where |z| overflows."""
    if x.dtype.kind != "c":
        return np.cbrt(x)
    re, im = x.real, x.imag
    huge = np.maximum(np.abs(re), np.abs(im)) > np.finfo(re.dtype).max / 2
    r = np.where(huge, 2 * np.cbrt(np.hypot(re * 0.125, im * 0.125)), np.cbrt(np.hypot(re, im)))
    angle = np.arctan2(im, re) / 3
    sin = np.sin(angle)
    return np.where(x == 0, x, _complex(r * np.cos(angle), np.where(sin == 0, sin, r * sin)))


def _erf(x: np.ndarray) -> np.ndarray:
    from scipy.special import erf  # scipy is a run-time dependency (Numba's BLAS)
    return erf(x.astype(np.float64))


def _imag(x: np.ndarray) -> np.ndarray:
    return x.imag if x.dtype.kind == "c" else np.zeros_like(x)


def _not(x: np.ndarray) -> np.ndarray:
    return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


# --------------------------------------------------------------------------
# the op tables
# --------------------------------------------------------------------------

def _same(t: PT) -> PT:
    return t


def _pred(t: PT) -> PT:
    return PT.PRED


def _component(t: PT) -> PT:
    """The real type of a complex type (the type itself otherwise)."""
    return {PT.C64: PT.F32, PT.C128: PT.F64}.get(t, t)


@dataclasses.dataclass(frozen=True)
class ElementwiseOp:
    """A row of the op tables."""

    kinds: tuple[str, ...]                    # element-type kinds admitted
    semantics: Callable[..., Any]             # NumPy, on widened values
    result: Callable[[PT], PT] = _same        # result element type from the operands'
    doc: str = ""
    types: tuple[PT, ...] | None = None       # a narrower list of admitted types, if any
    typed: bool = False                       # semantics also take the element type (t=)


BINARY_OPS: dict[str, ElementwiseOp] = {}
UNARY_OPS: dict[str, ElementwiseOp] = {}
BINARY_PRIMITIVES: dict[str, ElementwisePrimitive] = {}
UNARY_PRIMITIVES: dict[str, ElementwisePrimitive] = {}


def _same_shape(op: str, *avals: AbstractValue) -> None:
    first = avals[0]
    for a in avals[1:]:
        if a.dimensions != first.dimensions:
            raise ShapeError(op, "operand dimensions must be equal (broadcast explicitly "
                                 "with broadcast_in_dim, or pass broadcast_dimensions)", *avals)
        if a.element_type is not first.element_type:
            raise ShapeError(op, "operand element types must be equal (convert with "
                                 "convert_element_type)", *avals)


def _check_op(name: str, op: ElementwiseOp, x: AbstractValue) -> None:
    check_kinds(name, x, op.kinds)
    if op.types is not None and x.element_type not in op.types:
        raise ShapeError(name, f"operand element type {x.element_type.short_name} is not "
                               f"allowed (expected {' or '.join(t.short_name for t in op.types)})",
                         x)


def _elementwise_rule(name: str, op: ElementwiseOp, *avals: AbstractValue) -> AbstractValue:
    _same_shape(name, *avals)
    _check_op(name, op, avals[0])
    return array_value(op.result(avals[0].element_type), avals[0].dimensions,
                       builtins.all(a.weak_type for a in avals))


def _elementwise_impl(op: ElementwiseOp, *arrays: np.ndarray, operand_types=None) -> np.ndarray:
    types = types_of(arrays, op.kinds, operand_types)
    values = [widen(a, t) for a, t in zip(arrays, types)]
    with np.errstate(all="ignore"):
        out = op.semantics(*values, t=types[0]) if op.typed else op.semantics(*values)
    return narrow(out, op.result(types[0]))


def define_op(name: str, arity: int, op: ElementwiseOp) -> ElementwisePrimitive:
    """Register a table op: its primitive, shape rule and reference semantics."""
    prim = ElementwisePrimitive(name)
    prim.def_abstract_eval(functools.partial(_elementwise_rule, name, op))
    prim.def_impl(functools.partial(_elementwise_impl, op))
    (UNARY_OPS if arity == 1 else BINARY_OPS)[name] = op
    (UNARY_PRIMITIVES if arity == 1 else BINARY_PRIMITIVES)[name] = prim
    return prim


_BINARY_TABLE = {
    # StableHLO: add/mul of pred are logical or/and.
    "add": ElementwiseOp(ALL, _logical(np.add, np.logical_or), doc="x + y (wraps for integers)"),
    "sub": ElementwiseOp(NUMERIC, np.subtract, doc="x - y (wraps for integers)"),
    "mul": ElementwiseOp(ALL, _logical(_mul, np.logical_and),
                         doc="x * y (wraps for integers; complex as XLA:CPU multiplies)"),
    "div": ElementwiseOp(NUMERIC, _div, doc="x / y; integers truncate, x / 0 is -1 (all bits "
                                            "set), INT_MIN / -1 is INT_MIN"),
    "rem": ElementwiseOp(("signed", "unsigned", "float"), _rem,
                         doc="remainder with the dividend's sign (C fmod); x % 0 is x for "
                             "integers"),
    "pow": ElementwiseOp(NUMERIC, _pow, doc="x ** y; integers with y < 0 give 0 (1 for base 1, "
                                            "+-1 for base -1)"),
    "max": ElementwiseOp(ALL, np.maximum, doc="maximum; NaN propagates; complex compares "
                                              "lexicographically"),
    "min": ElementwiseOp(ALL, np.minimum, doc="minimum; NaN propagates; complex compares "
                                              "lexicographically"),
    "atan2": ElementwiseOp(INEXACT, _atan2, doc="atan2(x, y), the angle of (y, x)"),
    "complex": ElementwiseOp(FLOAT, _complex, lambda t: {PT.F32: PT.C64, PT.F64: PT.C128}[t],
                             doc="the complex number x + i*y", types=(PT.F32, PT.F64)),
    "and": ElementwiseOp(INTEGRAL, np.bitwise_and, doc="logical (pred) or bitwise and"),
    "or": ElementwiseOp(INTEGRAL, np.bitwise_or, doc="logical (pred) or bitwise or"),
    "xor": ElementwiseOp(INTEGRAL, np.bitwise_xor, doc="logical (pred) or bitwise xor"),
}

_UNARY_TABLE = {
    "neg": ElementwiseOp(NUMERIC, np.negative, doc="-x (wraps for integers)"),
    "abs": ElementwiseOp(SIGNED_NUMERIC, _abs, _component, doc="|x|; the magnitude (a real) "
                                                                "for complex x"),
    "sign": ElementwiseOp(SIGNED_NUMERIC, _sign, doc="sgn(x): -1, -0, NaN, +0 or 1; z/|z| for "
                                                     "complex"),
    "ceil": ElementwiseOp(FLOAT, np.ceil, doc="ceil(x), with no flush of denormals"),
    "floor": ElementwiseOp(FLOAT, np.floor, doc="floor(x)"),
    "round_nearest_afz": ElementwiseOp(FLOAT, _round_afz, doc="round half away from zero"),
    "round_nearest_even": ElementwiseOp(FLOAT, np.rint, doc="round half to even"),
    "cbrt": ElementwiseOp(INEXACT, _cbrt, doc="the cube root"),
    "cos": ElementwiseOp(INEXACT, _nan_where_real_not_finite(np.cos), doc="cos(x)"),
    "sin": ElementwiseOp(INEXACT, _nan_where_real_not_finite(np.sin), doc="sin(x)"),
    "tan": ElementwiseOp(INEXACT, np.tan, doc="tan(x)"),
    "tanh": ElementwiseOp(INEXACT, np.tanh, doc="tanh(x)"),
    "erf": ElementwiseOp(FLOAT, _erf, doc="the error function"),
    "exp": ElementwiseOp(INEXACT, np.exp, doc="e^x"),
    "expm1": ElementwiseOp(INEXACT, np.expm1, doc="e^x - 1"),
    "log": ElementwiseOp(INEXACT, np.log, doc="ln(x)"),
    "log1p": ElementwiseOp(INEXACT, np.log1p, doc="ln(1 + x)"),
    "logistic": ElementwiseOp(INEXACT, _logistic, doc="1 / (1 + e^-x)", typed=True),
    "sqrt": ElementwiseOp(INEXACT, np.sqrt, doc="the square root"),
    "rsqrt": ElementwiseOp(INEXACT, lambda x: 1 / np.sqrt(x), doc="1 / sqrt(x)"),
    "is_finite": ElementwiseOp(FLOAT, np.isfinite, _pred, doc="whether x is neither "
                                                              "infinite nor NaN (pred)"),
    "real": ElementwiseOp(INEXACT, np.real, _component, doc="the real part (x itself if real)"),
    "imag": ElementwiseOp(INEXACT, _imag, _component, doc="the imaginary part (0 if real)"),
    "not": ElementwiseOp(INTEGRAL, _not, doc="logical (pred) or bitwise not"),
}

for _name, _op in _BINARY_TABLE.items():
    define_op(_name, 2, _op)
for _name, _op in _UNARY_TABLE.items():
    if not _name.startswith("round_"):  # both roundings are one primitive, ``round``
        define_op(_name, 1, _op)

add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p, complex_p, and_p, or_p, \
    xor_p = (BINARY_PRIMITIVES[n] for n in ("add", "sub", "mul", "div", "rem", "pow", "max",
                                            "min", "atan2", "complex", "and", "or", "xor"))
neg_p, abs_p, sign_p, ceil_p, floor_p, cbrt_p, cos_p, sin_p, tan_p, tanh_p, erf_p, exp_p, \
    expm1_p, log_p, log1p_p, logistic_p, sqrt_p, rsqrt_p, is_finite_p, real_p, imag_p, \
    not_p = (UNARY_PRIMITIVES[n] for n in (
        "neg", "abs", "sign", "ceil", "floor", "cbrt", "cos", "sin", "tan", "tanh", "erf", "exp",
        "expm1", "log", "log1p", "logistic", "sqrt", "rsqrt", "is_finite", "real", "imag", "not"))


# Round ------------------------------------------------------------------------
class RoundingMethod(enum.IntEnum):
    """``round``'s tie-breaking rule (XLA's RoundNearestAfz / RoundNearestEven)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


_ROUNDINGS = {RoundingMethod.AWAY_FROM_ZERO: _UNARY_TABLE["round_nearest_afz"],
              RoundingMethod.TO_NEAREST_EVEN: _UNARY_TABLE["round_nearest_even"]}
round_p = ElementwisePrimitive("round")


@round_p.def_abstract_eval
def _round_rule(x: AbstractValue, *, rounding_method: RoundingMethod) -> AbstractValue:
    return _elementwise_rule("round", _ROUNDINGS[rounding_method], x)


@round_p.def_impl
def _round_impl(x: np.ndarray, *, rounding_method: RoundingMethod, operand_types=None):
    return _elementwise_impl(_ROUNDINGS[rounding_method], x, operand_types=operand_types)


# Compare ----------------------------------------------------------------------
COMPARISON_DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
_COMPARE_NUMPY = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less,
                  "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal}
compare_p = ElementwisePrimitive("compare")


@compare_p.def_abstract_eval
def _compare_rule(x: AbstractValue, y: AbstractValue, *, direction: str,
                  total_order: bool = False) -> AbstractValue:
    if direction not in COMPARISON_DIRECTIONS:
        raise ShapeError("compare", f"comparison_direction {direction!r} is not one of "
                                    f"{', '.join(COMPARISON_DIRECTIONS)}", x, y)
    _same_shape("compare", x, y)
    if x.element_type.is_complex and not total_order and direction not in ("EQ", "NE"):
        raise ShapeError("compare", f"comparison_direction {direction} is not defined for "
                                    f"complex operands (only EQ, NE, or a total order)", x, y)
    return array_value(PT.PRED, x.dimensions)


def _total_order_key(v: np.ndarray) -> np.ndarray:
    """Integers ordered as XLA's total order of floats:
    -NaN < -inf < ... < -0 < +0 < ... < inf < NaN."""
    bits = np.array(v, order="C", copy=None).view(np.dtype(f"i{v.dtype.itemsize}"))
    return np.where(bits < 0, bits ^ np.iinfo(bits.dtype).max, bits)


def _three_way(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a > b).astype(np.int8) - (a < b).astype(np.int8)


@compare_p.def_impl
def _compare_impl(x: np.ndarray, y: np.ndarray, *, direction: str, total_order: bool = False,
                  operand_types=None) -> np.ndarray:
    types = types_of((x, y), ALL, operand_types)
    x, y = widen(x, types[0]), widen(y, types[1])
    fn = _COMPARE_NUMPY[direction]
    if x.dtype.kind == "c":
        if not total_order:
            return fn(x, y)
        # lexicographic on (real, imag), each in the total order
        key = _total_order_key
        c = _three_way(key(x.real), key(y.real))
        c = np.where(c != 0, c, _three_way(key(x.imag), key(y.imag)))
        return fn(c, 0)
    if total_order and x.dtype.kind == "f":
        return fn(_total_order_key(x), _total_order_key(y))
    return fn(x, y)


# Select -------------------------------------------------------------------------
select_p = Primitive("select")


@select_p.def_abstract_eval
def _select_rule(pred: AbstractValue, on_true: AbstractValue, on_false: AbstractValue
                 ) -> AbstractValue:
    if pred.element_type is not PT.PRED:
        raise ShapeError("select", f"pred must have element type pred, got "
                                   f"{pred.element_type.short_name}", pred, on_true, on_false)
    _same_shape("select", on_true, on_false)
    if pred.dimensions not in ((), on_true.dimensions):
        raise ShapeError("select", "pred must be a scalar or have the dimensions of on_true "
                                   "and on_false", pred, on_true, on_false)
    return array_value(on_true.element_type, on_true.dimensions,
                       on_true.weak_type and on_false.weak_type)


@select_p.def_impl
def _select_impl(pred, on_true, on_false):
    return np.where(pred, on_true, on_false)


# Clamp ---------------------------------------------------------------------------
clamp_p = ElementwisePrimitive("clamp")


@clamp_p.def_abstract_eval
def _clamp_rule(lo: AbstractValue, x: AbstractValue, hi: AbstractValue) -> AbstractValue:
    for name, bound in (("min", lo), ("max", hi)):
        if bound.element_type is not x.element_type:
            raise ShapeError("clamp", f"{name} element type {bound.element_type.short_name} "
                                      f"differs from the operand's {x.element_type.short_name}",
                             lo, x, hi)
        if bound.dimensions not in ((), x.dimensions):
            raise ShapeError("clamp", f"{name} must be a scalar or have the operand's "
                                      f"dimensions", lo, x, hi)
    check_kinds("clamp", x, ALL)
    return array_value(x.element_type, x.dimensions, lo.weak_type and x.weak_type and hi.weak_type)


@clamp_p.def_impl
def _clamp_impl(lo, x, hi, *, operand_types=None):
    types = types_of((lo, x, hi), ALL, operand_types)
    lo, x, hi = (widen(a, t) for a, t in zip((lo, x, hi), types))
    return narrow(np.minimum(np.maximum(x, lo), hi), types[1])


# ConvertElementType -----------------------------------------------------------
convert_element_type_p = ElementwisePrimitive("convert_element_type")


@convert_element_type_p.def_abstract_eval
def _convert_rule(x: AbstractValue, *, new_dtype: PT) -> AbstractValue:
    if not isinstance(new_dtype, PT) or not new_dtype.is_array:
        raise ShapeError("convert_element_type", f"new_dtype must be an array element type, "
                                                 f"got {new_dtype!r}", x)
    if not x.shape.is_array:
        raise ShapeError("convert_element_type", "the operand must be an array (not a tuple "
                                                 "or token)", x)
    return array_value(new_dtype, x.dimensions)


def convert_values(x: np.ndarray, new_dtype: PT, source: PT | None = None) -> np.ndarray:
    """XLA's conversion: complex to real keeps the real part; to pred is
    ``x != 0``; float to integer saturates and maps NaN to 0; conversions to
    and from bf16 go through f32."""
    source = source or PT.from_dtype(x.dtype)
    x = widen(x, PT.BF16) if source is PT.BF16 else np.asarray(x)
    if x.dtype.kind == "c" and not new_dtype.is_complex:
        x = x.real
    if new_dtype is PT.PRED:
        return x != 0
    target = new_dtype.numpy_dtype
    with np.errstate(all="ignore"):
        if x.dtype.kind == "f" and new_dtype.is_integral:
            info = np.iinfo(target)
            inside = np.clip(np.nan_to_num(x, nan=0.0), info.min, info.max)
            # the float bounds may round past the integer range: saturate explicitly
            out = np.where(x >= float(info.max), info.max,
                           np.where(x <= float(info.min), info.min, inside.astype(target)))
            return np.where(np.isnan(x), 0, out).astype(target)
        if new_dtype is PT.BF16:
            return bf16_from_f32(x.astype(np.float32))
        return x.astype(target)


@convert_element_type_p.def_impl
def _convert_impl(x: np.ndarray, *, new_dtype: PT, operand_types=None) -> np.ndarray:
    return convert_values(x, new_dtype, operand_types[0] if operand_types else None)


# --------------------------------------------------------------------------
# user-facing functions
# --------------------------------------------------------------------------

def convert_element_type(operand: Any, new_dtype: Any) -> Any:
    """XLA's ConvertElementType to ``new_dtype`` (a dtype, a name such as
    ``'f32'``, or a ``PrimitiveType``); a no-op when it already has that type."""
    t = canonical_type(new_dtype)
    aval = abstractify(operand)
    if aval.element_type is t and not aval.weak_type:
        return operand
    if isinstance(operand, (bool, int, float, builtins.complex)):
        if t is not PT.BF16:
            return np.asarray(operand, dtype=t.numpy_dtype)  # a Python scalar: convert now
        operand = np.asarray(operand)  # bf16 words come from the primitive (through f32)
    return convert_element_type_p.bind(operand, new_dtype=t)


def promote(*args: Any) -> list[Any]:
    """Convert arguments to their common element type (see ``dtypes``)."""
    t, _weak = result_type(*args)
    return [convert_element_type(a, t) if abstractify(a).element_type is not t
            or abstractify(a).weak_type else a for a in args]


def implicit_broadcast(op: str, args: Sequence[Any],
                       broadcast_dimensions: Sequence[int] | None = None) -> list[Any]:
    """XLA's implicit broadcasting, made explicit with ``broadcast_in_dim``.

    Rank-0 operands broadcast to the others; operands of equal rank
    broadcast their size-1 dimensions; with ``broadcast_dimensions`` (the
    XlaBuilder form) the lower-rank operand's dimension ``i`` maps to
    dimension ``broadcast_dimensions[i]`` of the higher-rank one."""
    from .shape_ops import broadcast_in_dim
    avals = [abstractify(a) for a in args]
    rank = builtins.max(a.ndim for a in avals)
    maps: list[tuple[int, ...]] = []
    if broadcast_dimensions is not None and builtins.all(a.ndim == rank for a in avals) and \
            tuple(broadcast_dimensions) not in ((), tuple(range(rank))):
        raise ShapeError(op, f"broadcast_dimensions {tuple(broadcast_dimensions)} must be empty "
                             f"or the identity for operands of equal rank", *avals)
    for a in avals:
        if a.ndim == rank:
            maps.append(tuple(range(rank)))
        elif broadcast_dimensions is not None:
            bd = as_int_tuple(op, "broadcast_dimensions", broadcast_dimensions)
            if len(bd) != a.ndim:
                raise ShapeError(op, f"broadcast_dimensions {bd} must have one entry per "
                                     f"dimension of the lower-rank operand (rank {a.ndim})",
                                 *avals)
            if any(not 0 <= d < rank for d in bd) or list(bd) != sorted(set(bd)):
                raise ShapeError(op, f"broadcast_dimensions {bd} must be strictly increasing "
                                     f"dimensions of the rank-{rank} operand", *avals)
            maps.append(bd)
        elif a.ndim == 0:
            maps.append(())
        else:
            raise ShapeError(op, "operands of different ranks need broadcast_dimensions "
                                 "(XLA's implicit broadcast form)", *avals)
    target = []
    for j in range(rank):
        sizes = {a.dimensions[m.index(j)] for a, m in zip(avals, maps) if j in m}
        if len(sizes - {1}) > 1:
            raise ShapeError(op, f"operand dimensions must be equal (or 1, to broadcast): "
                                 f"dimension {j} has sizes {sorted(sizes)}", *avals)
        target.append(builtins.min(sizes - {1}, default=1))
    return [x if a.dimensions == tuple(target) else
            broadcast_in_dim(x, target, m) for x, a, m in zip(args, avals, maps)]


def _binary(prim: Primitive, name: str | None = None) -> Callable[..., Any]:
    op = BINARY_OPS[prim.name]

    def fn(x: Any, y: Any, broadcast_dimensions: Sequence[int] | None = None) -> Any:
        x, y = implicit_broadcast(prim.name, promote(x, y), broadcast_dimensions)
        return prim.bind(x, y)
    fn.__name__ = fn.__qualname__ = name or prim.name
    fn.__doc__ = (f"XLA's element-wise ``{prim.name}``: {op.doc}.  Python scalars are weakly "
                  f"typed; operands broadcast as ``implicit_broadcast`` says.")
    return fn


def _unary(prim: Primitive, name: str | None = None) -> Callable[[Any], Any]:
    op = UNARY_OPS[prim.name]

    def fn(x: Any) -> Any:
        (x,) = promote(x)
        return prim.bind(x)
    fn.__name__ = fn.__qualname__ = name or prim.name
    fn.__doc__ = f"XLA's element-wise ``{prim.name}``: {op.doc}."
    return fn


add, sub, mul, div, rem, pow, max, min, atan2, complex = (
    _binary(p) for p in (add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p,
                         complex_p))
bitwise_and, bitwise_or, bitwise_xor = (_binary(p, "bitwise_" + p.name) for p in (and_p, or_p,
                                                                                   xor_p))
and_, or_, xor = bitwise_and, bitwise_or, bitwise_xor

neg, abs, sign, ceil, floor, cbrt, cos, sin, tan, tanh, erf, exp, expm1, log, log1p, \
    logistic, sqrt, rsqrt, is_finite, real, imag = (
        _unary(p) for p in (neg_p, abs_p, sign_p, ceil_p, floor_p, cbrt_p, cos_p, sin_p, tan_p,
                            tanh_p, erf_p, exp_p, expm1_p, log_p, log1p_p, logistic_p, sqrt_p,
                            rsqrt_p, is_finite_p, real_p, imag_p))
bitwise_not = not_ = _unary(not_p, "bitwise_not")


def round(x: Any, rounding_method: RoundingMethod | str | int = RoundingMethod.AWAY_FROM_ZERO
          ) -> Any:
    """XLA's Round (half away from zero) or RoundNearestEven, by ``rounding_method``
    (a ``RoundingMethod``, its name or its value)."""
    if isinstance(rounding_method, str):
        try:
            rounding_method = RoundingMethod[rounding_method.upper()]
        except KeyError:
            raise ShapeError("round", f"rounding_method {rounding_method!r} is not one of "
                                      f"{', '.join(RoundingMethod.__members__)}") from None
    (x,) = promote(x)
    return round_p.bind(x, rounding_method=RoundingMethod(rounding_method))


def round_nearest_even(x: Any) -> Any:
    """XLA's RoundNearestEven: round half to even."""
    return round(x, RoundingMethod.TO_NEAREST_EVEN)


def compare(x: Any, y: Any, direction: str, total_order: bool = False,
            broadcast_dimensions: Sequence[int] | None = None) -> Any:
    """XLA's Compare with ``comparison_direction`` ``EQ, NE, LT, LE, GT, GE``;
    ``total_order`` orders floats -NaN < -inf < ... < -0 < +0 < ... < inf < NaN
    (and complex numbers lexicographically)."""
    x, y = implicit_broadcast("compare", promote(x, y), broadcast_dimensions)
    return compare_p.bind(x, y, direction=str(direction).upper(), total_order=bool(total_order))


def _comparison(direction: str, total_order: bool) -> Callable[..., Any]:
    def fn(x: Any, y: Any, broadcast_dimensions: Sequence[int] | None = None) -> Any:
        return compare(x, y, direction, total_order, broadcast_dimensions)
    fn.__name__ = fn.__qualname__ = direction.lower() + ("_total_order" if total_order else "")
    fn.__doc__ = (f"XLA's {direction.capitalize()}{'TotalOrder' if total_order else ''}: "
                  f"``compare(x, y, {direction!r}, total_order={total_order})``.")
    return fn


eq, ne, lt, le, gt, ge = (_comparison(d, False) for d in COMPARISON_DIRECTIONS)
eq_total_order, ne_total_order, lt_total_order, le_total_order, gt_total_order, \
    ge_total_order = (_comparison(d, True) for d in COMPARISON_DIRECTIONS)


def _broadcast_to_operand(args: list[Any], first: int) -> list[Any]:
    """Rank-0 arguments from ``first`` on broadcast to the shape of the others."""
    from .shape_ops import broadcast_in_dim
    dims = [abstractify(a).dimensions for a in args]
    target = next((d for d in dims[first:] if d != ()), ())
    return [broadcast_in_dim(a, target, ()) if i >= first and d == () and target != () else a
            for i, (a, d) in enumerate(zip(args, dims))]


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """XLA's Select: ``on_true`` where ``pred`` else ``on_false`` (``pred`` may be a scalar)."""
    on_true, on_false = _broadcast_to_operand(promote(on_true, on_false), 0)
    if isinstance(pred, bool):
        pred = np.bool_(pred)
    return select_p.bind(pred, on_true, on_false)


def clamp(min: Any, x: Any, max: Any) -> Any:
    """XLA's Clamp: ``min(max(x, min), max)``; ``min`` and ``max`` may be scalars."""
    lo, x, hi = promote(min, x, max)
    if abstractify(x).ndim == 0:
        x, lo, hi = _broadcast_to_operand([x, lo, hi], 0)
    return clamp_p.bind(lo, x, hi)


# the bit-level ops (a module of their own, built on the machinery above)
from .elementwise_bits import *  # noqa: E402,F401,F403
from . import elementwise_bits as _bits  # noqa: E402

__all__ += _bits.__all__
