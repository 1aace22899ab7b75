"""Bit-level element-wise ops: ShiftLeft, ShiftRightArithmetic,
ShiftRightLogical, PopulationCount, Clz, BitcastConvertType and
ReducePrecision.  Re-exported by ``elementwise`` (import them from there or
from ``primitives``).

Shifts by an amount outside ``[0, bit width)`` (read as unsigned) give 0,
except ShiftRightArithmetic, which gives all sign bits.  PRED is one byte
wide for BitcastConvertType, as in XLA.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numxla.tracer.core import AbstractValue, Primitive, ShapeError, array_value
from numxla.tracer.shapes import PrimitiveType as PT

from ._util import check_kinds
from .dtypes import canonical_type
from .elementwise import (BINARY_OPS, UNARY_OPS, ElementwiseOp, ElementwisePrimitive, define_op,
                          implicit_broadcast, promote, types_of)

__all__ = ["shift_left", "shift_right_arithmetic", "shift_right_logical", "population_count",
           "clz", "bitcast_convert_type", "reduce_precision"]

INTEGER = ("signed", "unsigned")


def _as(x: np.ndarray, kind: str) -> np.ndarray:
    """The same bits as signed (``'i'``) or unsigned (``'u'``) integers."""
    return np.array(x, order="C", copy=None).view(np.dtype(f"{kind}{x.dtype.itemsize}"))


def _shift(x: np.ndarray, y: np.ndarray, how: str) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    amount = _as(y, "u")
    past = amount >= bits
    if how == "left":
        out = _as(x, "u") << np.where(past, 0, amount).astype(amount.dtype)
        out = np.where(past, 0, out)
    elif how == "logical":
        out = _as(x, "u") >> np.where(past, 0, amount).astype(amount.dtype)
        out = np.where(past, 0, out)
    else:  # arithmetic: a shift past the width leaves only sign bits
        signed = _as(x, "i")
        out = signed >> np.where(past, bits - 1, amount).astype(signed.dtype)
    return _as(np.asarray(out, dtype=np.dtype(f"{out.dtype.kind}{x.dtype.itemsize}")),
               x.dtype.kind)


def _popcount(x: np.ndarray) -> np.ndarray:
    return np.bitwise_count(_as(x, "u")).astype(x.dtype)


def _clz(x: np.ndarray) -> np.ndarray:
    """Leading zeros: smear the highest set bit rightwards, then count the ones."""
    u = np.array(_as(x, "u"), copy=True)
    step = 1
    while step < x.dtype.itemsize * 8:
        u |= u >> step
        step *= 2
    return (x.dtype.itemsize * 8 - np.bitwise_count(u).astype(np.int64)).astype(x.dtype)


shift_left_p = define_op("shift_left", 2, ElementwiseOp(
    INTEGER, lambda x, y: _shift(x, y, "left"), doc="x << y; 0 when y >= the bit width"))
shift_right_arithmetic_p = define_op("shift_right_arithmetic", 2, ElementwiseOp(
    INTEGER, lambda x, y: _shift(x, y, "arithmetic"),
    doc="x >> y, shifting in sign bits; all sign bits when y >= the bit width"))
shift_right_logical_p = define_op("shift_right_logical", 2, ElementwiseOp(
    INTEGER, lambda x, y: _shift(x, y, "logical"),
    doc="x >> y, shifting in zeros; 0 when y >= the bit width"))
population_count_p = define_op("population_count", 1, ElementwiseOp(
    INTEGER, _popcount, doc="the number of bits set"))
clz_p = define_op("clz", 1, ElementwiseOp(INTEGER, _clz, doc="the number of leading zero bits"))


def _binary(prim: ElementwisePrimitive):
    def fn(x: Any, y: Any, broadcast_dimensions=None) -> Any:
        x, y = implicit_broadcast(prim.name, promote(x, y), broadcast_dimensions)
        return prim.bind(x, y)
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"XLA's ``{prim.name}``: {BINARY_OPS[prim.name].doc}."
    return fn


def _unary(prim: ElementwisePrimitive):
    def fn(x: Any) -> Any:
        (x,) = promote(x)
        return prim.bind(x)
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = f"XLA's ``{prim.name}``: {UNARY_OPS[prim.name].doc}."
    return fn


shift_left, shift_right_arithmetic, shift_right_logical = (
    _binary(p) for p in (shift_left_p, shift_right_arithmetic_p, shift_right_logical_p))
population_count, clz = _unary(population_count_p), _unary(clz_p)


# BitcastConvertType -------------------------------------------------------------
bitcast_convert_type_p = Primitive("bitcast_convert_type")


def _width(t: PT) -> int:
    return t.numpy_dtype.itemsize * 8  # PRED is a byte


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_rule(x: AbstractValue, *, new_dtype: PT) -> AbstractValue:
    op = "bitcast_convert_type"
    if not isinstance(new_dtype, PT) or not new_dtype.is_array:
        raise ShapeError(op, f"new_dtype must be an array element type (not a tuple or "
                             f"token), got {new_dtype!r}", x)
    if not x.shape.is_array:
        raise ShapeError(op, "the operand must be an array (not a tuple or token)", x)
    b, b2 = _width(x.element_type), _width(new_dtype)
    if b == b2:
        return array_value(new_dtype, x.dimensions)
    if b > b2:  # a new minor dimension of size b / b2
        return array_value(new_dtype, x.dimensions + (b // b2,))
    if not x.dimensions or x.dimensions[-1] != b2 // b:
        raise ShapeError(op, f"converting {x.element_type.short_name} to the wider "
                             f"{new_dtype.short_name} needs a last dimension of size "
                             f"{b2 // b}", x)
    return array_value(new_dtype, x.dimensions[:-1])


@bitcast_convert_type_p.def_impl
def _bitcast_impl(x: np.ndarray, *, new_dtype: PT) -> np.ndarray:
    src = np.array(x, order="C", copy=None)
    if src.dtype == np.bool_:
        src = src.view(np.uint8)
    view = np.dtype(np.uint8) if new_dtype is PT.PRED else new_dtype.numpy_dtype
    if view.itemsize < src.dtype.itemsize:
        out = src.reshape(src.shape + (1,)).view(view)   # host order: little-endian
    elif view.itemsize > src.dtype.itemsize:
        out = src.view(view).reshape(src.shape[:-1])
    else:
        out = src.view(view)
    return out != 0 if new_dtype is PT.PRED else out


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """XLA's BitcastConvertType: the same bits read as ``new_dtype``.  A
    narrower type adds a minor dimension of size ``width / new width``; a
    wider one needs the last dimension to be ``new width / width`` and drops it."""
    return bitcast_convert_type_p.bind(operand, new_dtype=canonical_type(new_dtype))


# ReducePrecision -----------------------------------------------------------------
reduce_precision_p = ElementwisePrimitive("reduce_precision")

# (exponent bits, mantissa bits) of the float formats
_FORMATS = {PT.F16: (5, 10), PT.BF16: (8, 7), PT.F32: (8, 23), PT.F64: (11, 52)}


@reduce_precision_p.def_abstract_eval
def _reduce_precision_rule(x: AbstractValue, *, exponent_bits: int, mantissa_bits: int
                           ) -> AbstractValue:
    check_kinds("reduce_precision", x, ("float",))
    if exponent_bits < 1:
        raise ShapeError("reduce_precision", f"exponent_bits must be at least 1, got "
                                             f"{exponent_bits}", x)
    if mantissa_bits < 0:
        raise ShapeError("reduce_precision", f"mantissa_bits must be non-negative, got "
                                             f"{mantissa_bits}", x)
    return array_value(x.element_type, x.dimensions, x.weak_type)


@reduce_precision_p.def_impl
def _reduce_precision_impl(x: np.ndarray, *, exponent_bits: int, mantissa_bits: int,
                           operand_types=None) -> np.ndarray:
    """XLA's emitter: round the mantissa to nearest even, then send exponents
    out of range to +-inf (overflow) or +-0 (underflow, denormals included).
    NaN stays NaN, except with 0 mantissa bits, where it becomes +inf."""
    (t,) = types_of((x,), ("float",), operand_types)
    src_exponent, src_mantissa = _FORMATS[t]
    bits = _as(x, "u")
    word = bits.dtype.type
    sign_mask = word(1 << (bits.dtype.itemsize * 8 - 1))
    exponent_mask = word(((1 << src_exponent) - 1) << src_mantissa)
    is_nan = (bits & ~sign_mask) > exponent_mask
    with np.errstate(over="ignore"):
        if mantissa_bits < src_mantissa:
            shift = src_mantissa - mantissa_bits
            last = 1 << shift
            bias = ((bits & word(last)) >> word(shift)) + word((last >> 1) - 1)
            bits = (bits + bias) & ~word(last - 1)  # a carry into the exponent is right
        if exponent_bits < src_exponent:
            bias = (1 << (src_exponent - 1)) - 1
            reduced_bias = (1 << (exponent_bits - 1)) - 1
            exponent = bits & exponent_mask
            overflows = exponent > word((bias + reduced_bias) << src_mantissa)
            underflows = exponent <= word((bias - reduced_bias) << src_mantissa)
            signed_zero = bits & sign_mask
            bits = np.where(overflows, signed_zero | exponent_mask,
                            np.where(underflows, signed_zero, bits))
    nan_result = _as(x, "u") if mantissa_bits > 0 else exponent_mask  # +inf
    out = np.where(is_nan, nan_result, bits).astype(bits.dtype)
    return out.view(x.dtype)


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """XLA's ReducePrecision: the value rounded to a float format of
    ``exponent_bits`` and ``mantissa_bits`` and back (same element type)."""
    return reduce_precision_p.bind(operand, exponent_bits=int(exponent_bits),
                                   mantissa_bits=int(mantissa_bits))
