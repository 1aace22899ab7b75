"""StableHLO element-wise ops, compare, select, clamp, convert, bitcast_convert,
reduce_precision (and chlo.mulhi, composed of numxla ops) -> numxla.

StableHLO's i1 is one bit wide for bitcast_convert (XLA's PRED is a byte):
those cases pack and unpack bits with shifts, a reduction and a bitcast.
"""
from __future__ import annotations

import numpy as np

import numxla.primitives as lax
from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .harness import OpCall, register


_SAME_TYPE = {
    # binary
    "add": lax.add, "subtract": lax.sub, "multiply": lax.mul, "divide": lax.div,
    "remainder": lax.rem, "power": lax.pow, "maximum": lax.max, "minimum": lax.min,
    "atan2": lax.atan2, "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
    "shift_left": lax.shift_left, "shift_right_arithmetic": lax.shift_right_arithmetic,
    "shift_right_logical": lax.shift_right_logical,
    # unary
    "negate": lax.neg, "abs": lax.abs, "sign": lax.sign, "ceil": lax.ceil, "floor": lax.floor,
    "round_nearest_afz": lax.round, "round_nearest_even": lax.round_nearest_even,
    "cbrt": lax.cbrt, "cosine": lax.cos, "sine": lax.sin, "tan": lax.tan, "tanh": lax.tanh,
    "exponential": lax.exp, "exponential_minus_one": lax.expm1, "log": lax.log,
    "log_plus_one": lax.log1p, "logistic": lax.logistic, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt,
    "is_finite": lax.is_finite, "real": lax.real, "imag": lax.imag, "not": lax.bitwise_not,
    "popcnt": lax.population_count, "count_leading_zeros": lax.clz, "complex": lax.complex,
    "clamp": lax.clamp,
}

for _name, _fn in _SAME_TYPE.items():
    register(_name)(lambda call, fn=_fn: fn(*call.operands))


@register("compare")
def _compare(call: OpCall):
    total = call.attributes.get("compare_type") == "TOTALORDER"
    return lax.compare(*call.operands, call.attributes["comparison_direction"], total_order=total)


@register("select")
def _select(call: OpCall):
    return lax.select(*call.operands)


@register("convert")
def _convert(call: OpCall):
    return lax.convert_element_type(call.operands[0], call.result_types[0].element_type)


@register("reduce_precision")
def _reduce_precision(call: OpCall):
    (x,) = call.operands
    return lax.reduce_precision(x, call.attributes["exponent_bits"],
                                call.attributes["mantissa_bits"])


# bitcast_convert, with StableHLO's one-bit i1 ------------------------------------------

def _unsigned(bits: int) -> PT:
    return {8: PT.U8, 16: PT.U16, 32: PT.U32, 64: PT.U64}[bits]


def _bits_of(x, bits: int):
    """``x``'s bits (a type ``bits`` wide) as pred[..., bits], least significant first."""
    words = lax.bitcast_convert_type(x, _unsigned(bits))
    dims = abstractify(words).dimensions
    spread = lax.broadcast_in_dim(words, dims + (bits,), tuple(range(len(dims))))
    positions = np.broadcast_to(np.arange(bits, dtype=_unsigned(bits).numpy_dtype),
                                dims + (bits,))
    return lax.convert_element_type(
        lax.bitwise_and(lax.shift_right_logical(spread, positions), 1), PT.PRED)


def _from_bits(x, new_type: PT):
    """pred[..., bits] (least significant first) packed into ``new_type``."""
    dims = abstractify(x).dimensions
    u = _unsigned(dims[-1])
    positions = np.broadcast_to(np.arange(dims[-1], dtype=u.numpy_dtype), dims)
    words = lax.reduce_sum(lax.shift_left(lax.convert_element_type(x, u), positions),
                           (len(dims) - 1,))  # distinct bits: the sum is their or
    return lax.bitcast_convert_type(words, new_type)


@register("bitcast_convert")
def _bitcast_convert(call: OpCall):
    (x,) = call.operands
    source, target = abstractify(x).element_type, call.result_types[0].element_type
    if source is PT.PRED and target is not PT.PRED:
        return _from_bits(x, target)
    if target is PT.PRED and source is not PT.PRED:
        return _bits_of(x, source.bit_width)
    return lax.bitcast_convert_type(x, target)


# chlo.mulhi: the high half of the double-width product -------------------------------

def _mulhi_u64(a, b):
    """High 64 bits of a u64 product, from 32-bit halves."""
    low = np.uint64(0xFFFFFFFF)
    a_lo, a_hi = lax.bitwise_and(a, low), lax.shift_right_logical(a, np.uint64(32))
    b_lo, b_hi = lax.bitwise_and(b, low), lax.shift_right_logical(b, np.uint64(32))
    lh, hl = lax.mul(a_lo, b_hi), lax.mul(a_hi, b_lo)
    carry = lax.add(lax.add(lax.shift_right_logical(lax.mul(a_lo, b_lo), np.uint64(32)),
                            lax.bitwise_and(lh, low)), lax.bitwise_and(hl, low))
    return lax.add(lax.add(lax.mul(a_hi, b_hi), lax.shift_right_logical(lh, np.uint64(32))),
                   lax.add(lax.shift_right_logical(hl, np.uint64(32)),
                           lax.shift_right_logical(carry, np.uint64(32))))


@register("chlo.mulhi")
def _mulhi(call: OpCall):
    a, b = call.operands
    t = abstractify(a).element_type
    if t.bit_width < 64:
        wide = PT.S64 if t.is_signed else PT.U64
        product = lax.mul(lax.convert_element_type(a, wide), lax.convert_element_type(b, wide))
        shift = np.array(t.bit_width, wide.numpy_dtype)
        return lax.convert_element_type(lax.shift_right_arithmetic(product, shift), t)
    ua, ub = (lax.bitcast_convert_type(v, PT.U64) for v in (a, b))
    high = _mulhi_u64(ua, ub)
    if t.is_signed:  # two's complement: subtract b if a < 0 and a if b < 0
        zero = np.uint64(0)
        high = lax.sub(high, lax.select(lax.lt(a, 0), ub, lax.broadcast_in_dim(
            zero, abstractify(ub).dimensions, ())))
        high = lax.sub(high, lax.select(lax.lt(b, 0), ua, lax.broadcast_in_dim(
            zero, abstractify(ua).dimensions, ())))
    return lax.bitcast_convert_type(high, t)
