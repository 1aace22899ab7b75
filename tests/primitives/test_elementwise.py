"""Element-wise ops: the semantics document's examples and pinned values, shape
errors at trace time, properties against independent formulations (Python
integers, the math/cmath/decimal modules, NumPy's own functions for the
NumPy layer), and tracing into printed graphs."""
from __future__ import annotations

import cmath
import decimal
import math

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.elementwise import add_p, compare_p
from numxla.tracer import make_graph, parse_shape
from numxla.tracer.core import ShapeError, bf16_array
from numxla.tracer.graph import eval_graph
from numxla.tracer.shapes import PrimitiveType as PT, bf16_from_f32, bf16_to_f32

RNG = np.random.default_rng(20240611)
INT_TYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def bf16(values):
    """An eager bf16 value (uint16 words marked as bf16), rounded from ``values``."""
    return bf16_array(bf16_from_f32(np.asarray(values, dtype=np.float32)))


def as_f32(bf16_words) -> np.ndarray:
    return bf16_to_f32(np.asarray(bf16_words))


def round_to_bf16(values) -> np.ndarray:
    return bf16_to_f32(bf16_from_f32(np.asarray(values, dtype=np.float32)))


def trace(fn, *specs):
    return make_graph(fn)(*[parse_shape(s) if isinstance(s, str) else s for s in specs])


# --------------------------------------------------------------------------
# the document's examples and the issue's pinned values
# --------------------------------------------------------------------------

def test_clamp_example_with_scalar_bounds():
    out = lax.clamp(np.int32(0), np.array([-1, 5, 9], np.int32), np.int32(6))
    assert out.dtype == np.int32 and out.tolist() == [0, 5, 6]


def test_convert_element_type_example():
    out = lax.convert_element_type(np.array([0, 1, 2], np.int32), np.float32)
    assert out.dtype == np.float32 and out.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("src, dtype, want", [
    ("f32[10]", np.float16, "f16[10,2]"),
    ("f32[]", np.float16, "f16[2]"),
    ("f16[10,2]", np.float32, "f32[10]"),
    ("s32[4]", np.int8, "s8[4,4]"),
    ("f64[3]", np.uint64, "u64[3]"),
    ("pred[2,8]", np.float64, "f64[2]"),
])
def test_bitcast_convert_type_shapes_of_the_document(src, dtype, want):
    g = trace(lambda x: lax.bitcast_convert_type(x, dtype), src)
    assert f"{want}{{" in g.as_text() and "bitcast_convert_type(" in g.as_text()


def test_sign_follows_the_documents_table():
    x = np.array([-2.5, -0.0, np.nan, 0.0, 3.0], np.float32)
    out = lax.sign(x)
    assert out[0] == -1 and out[4] == 1 and np.isnan(out[2])
    assert out[1] == 0 and np.signbit(out[1]) and out[3] == 0 and not np.signbit(out[3])
    assert lax.sign(np.array([-7, 0, 9], np.int32)).tolist() == [-1, 0, 1]


def test_total_order_of_the_document():
    ordered = np.array([-np.nan, -np.inf, -3.5, -0.0, 0.0, 2.0, np.inf, np.nan], np.float32)
    ordered[0] = -abs(ordered[0])  # a NaN with the sign bit set
    assert np.signbit(ordered[0])
    n = len(ordered)
    a, b = np.repeat(ordered, n), np.tile(ordered, n)
    i, j = np.repeat(np.arange(n), n), np.tile(np.arange(n), n)
    assert (lax.lt_total_order(a, b) == (i < j)).all()
    assert (lax.le_total_order(a, b) == (i <= j)).all()
    assert (lax.gt_total_order(a, b) == (i > j)).all()
    assert (lax.ge_total_order(a, b) == (i >= j)).all()
    assert (lax.eq_total_order(a, b) == (i == j)).all()
    assert (lax.ne_total_order(a, b) == (i != j)).all()
    # the IEEE comparisons differ exactly there: NaN is unordered, -0 == +0
    assert not lax.eq(np.float32(np.nan), np.float32(np.nan))
    assert lax.eq(np.float32(-0.0), np.float32(0.0))


def test_real_and_imag_accept_real_operands():
    x = np.array([1.5, -2.0], np.float64)
    assert lax.real(x).tolist() == [1.5, -2.0]
    assert lax.imag(x).tolist() == [0.0, 0.0] and lax.imag(x).dtype == np.float64
    z = np.array([1 + 2j], np.complex64)
    assert lax.real(z).dtype == np.float32 and lax.imag(z).tolist() == [2.0]
    assert lax.abs(np.array([3 + 4j], np.complex128)).tolist() == [5.0]


def test_integer_division_and_remainder_are_xlas():
    i32 = np.iinfo(np.int32)
    x = np.array([7, -7, 7, -7, 5, i32.min, i32.min], np.int32)
    y = np.array([2, 2, -2, -2, 0, -1, 0], np.int32)
    assert lax.div(x, y).tolist() == [3, -3, -3, 3, -1, i32.min, -1]
    assert lax.rem(x, y).tolist() == [1, -1, 1, -1, 5, 0, i32.min]
    u = np.array([7, 9], np.uint8)
    assert lax.div(u, np.array([0, 2], np.uint8)).tolist() == [255, 4]
    assert lax.rem(u, np.array([0, 2], np.uint8)).tolist() == [7, 1]


def test_float_remainder_has_the_dividends_sign():
    out = lax.rem(np.array([5.5, -5.5, 5.5, -5.5]), np.array([2.0, 2.0, -2.0, -2.0]))
    assert out.tolist() == [1.5, -1.5, 1.5, -1.5]


def test_integer_pow_with_negative_exponents():
    base = np.array([2, 1, -1, -1, 0, 5, 3], np.int32)
    exponent = np.array([-1, -7, -3, -4, -2, 0, 20], np.int32)
    assert lax.pow(base, exponent).tolist() == [0, 1, -1, 1, 0, 1, 3 ** 20 % 2 ** 32 - 2 ** 32]


def test_shifts_past_the_bit_width():
    x = np.array([1, -8, -8, 5], np.int32)
    s = np.array([32, 40, -1, 31], np.int32)
    assert lax.shift_left(x, s).tolist() == [0, 0, 0, -2 ** 31]
    assert lax.shift_right_logical(x, s).tolist() == [0, 0, 0, 0]
    assert lax.shift_right_arithmetic(x, s).tolist() == [0, -1, -1, 0]
    assert lax.shift_right_arithmetic(np.uint8(0x80), np.uint8(9)) == 0xFF


def test_ceil_does_not_flush_denormals_and_round_is_half_away_from_zero():
    assert lax.ceil(np.float32(1.4e-45)) == 1.0
    assert lax.floor(np.float32(-1.4e-45)) == -1.0
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.3], np.float32)
    assert lax.round(x).tolist() == [1, 2, 3, -1, -3, 0, -0.0]
    assert np.signbit(lax.round(x)[-1])
    assert lax.round_nearest_even(x).tolist() == [0, 2, 2, -0.0, -2, 0, -0.0]
    assert lax.round(x, "to_nearest_even").tolist() == lax.round_nearest_even(x).tolist()
    assert lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO).tolist() == lax.round(x).tolist()


def test_max_min_propagate_nan_and_ieee_specials():
    x = np.array([np.nan, 1.0, -np.inf], np.float32)
    y = np.array([2.0, np.nan, 3.0], np.float32)
    assert np.isnan(lax.max(x, y)[:2]).all() and np.isnan(lax.min(x, y)[:2]).all()
    assert lax.max(x, y)[2] == 3.0 and lax.min(x, y)[2] == -np.inf
    assert np.isnan(lax.sub(np.float32(np.inf), np.float32(np.inf)))
    assert lax.div(np.float32(1), np.float32(-0.0)) == -np.inf


def test_integer_overflow_wraps():
    assert lax.add(np.int8(127), np.int8(1)) == -128
    assert lax.mul(np.uint16(300), np.uint16(300)) == (300 * 300) % 2 ** 16
    assert lax.neg(np.int32(-2 ** 31)) == -2 ** 31
    assert lax.abs(np.int64(-2 ** 63)) == -2 ** 63
    assert lax.neg(np.uint8(1)) == 255


def test_convert_saturates_maps_nan_to_zero_and_takes_real_parts():
    x = np.array([np.nan, 1e10, -1e10, 3.99, -3.99, np.inf], np.float32)
    assert lax.convert_element_type(x, np.int32).tolist() == [0, 2 ** 31 - 1, -2 ** 31, 3, -3,
                                                              2 ** 31 - 1]
    assert lax.convert_element_type(x, np.uint8).tolist() == [0, 255, 0, 3, 0, 255]
    z = np.array([-1 + 0j, 1j, 1 + 0j, np.nan], np.complex128)
    assert lax.convert_element_type(z, np.bool_).tolist() == [True, False, True, True]
    assert lax.convert_element_type(z[:3], np.int32).tolist() == [-1, 0, 1]
    assert lax.convert_element_type(np.array([-0.0, 0.5]), np.bool_).tolist() == [False, True]


def test_reduce_precision_overflow_underflow_and_nan():
    x = np.array([65504.0, 65520.0, -1e6, 1e-8, 1.0 + 2 ** -11, 1.0 + 3 * 2 ** -11, np.nan])
    out = lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10)
    assert out[:6].tolist() == [65504.0, np.inf, -np.inf, 0.0, 1.0, 1.0 + 2 ** -9]
    assert np.isnan(out[6])
    assert lax.reduce_precision(np.float64(np.nan), 5, 0) == np.inf
    assert lax.reduce_precision(np.float32(-np.nan), 8, 0) == np.inf


def test_complex_builds_from_parts_without_nan_from_inf():
    out = lax.complex(np.array([1.0, np.inf], np.float32), np.array([np.inf, -2.0], np.float32))
    assert out.dtype == np.complex64
    assert out[0].real == 1.0 and out[0].imag == np.inf and out[1].real == np.inf


def test_pred_arithmetic_is_logical():
    t, f = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert lax.add(t, f).tolist() == [True, True, True, False]
    assert lax.mul(t, f).tolist() == [True, False, False, False]
    assert lax.bitwise_xor(t, f).tolist() == [False, True, True, False]
    assert lax.bitwise_not(t).tolist() == [False, False, True, True]
    assert lax.max(t, f).tolist() == [True, True, True, False]


def test_bf16_is_computed_in_f32_and_rounded_once():
    a, b = [1.0, -2.5, 3.0, 1e30], [0.00390625, 0.75, 1 / 3, 1e30]
    assert as_f32(lax.add(bf16(a), bf16(b))).tolist() == round_to_bf16(
        np.float32(round_to_bf16(a)) + np.float32(round_to_bf16(b))).tolist()
    assert as_f32(lax.neg(bf16([1.5, -0.0]))).tolist() == [-1.5, 0.0]
    assert lax.lt(bf16([-1.0, 2.0]), bf16([1.0, -3.0])).tolist() == [True, False]
    assert np.asarray(lax.max(bf16([np.nan]), bf16([1.0]))).dtype == np.uint16  # bf16 words
    assert np.isnan(as_f32(lax.max(bf16([np.nan]), bf16([1.0])))).all()
    assert lax.convert_element_type(bf16([1.5, -2.0]), np.float32).tolist() == [1.5, -2.0]
    assert as_f32(lax.convert_element_type(np.float32(1 + 2 ** -9), PT.BF16)) == 1.0


def test_bf16_values_stay_bf16_through_eager_chains_and_graphs():
    x = bf16([0.5, -1.25, 3.0])
    y = lax.tanh(lax.mul(x, 2.0))
    assert isinstance(y, type(x))  # still bf16 for the next op
    want = round_to_bf16(np.tanh(round_to_bf16(round_to_bf16([0.5, -1.25, 3.0]) * 2)))
    assert as_f32(y).tolist() == want.tolist()
    g = make_graph(lambda v: lax.tanh(lax.mul(v, 2.0)))(x)
    assert as_f32(eval_graph(g, x)[0]).tolist() == want.tolist()
    u16 = np.array([1, 2], np.uint16)  # a genuine u16 is no bf16
    assert lax.add(u16, u16).tolist() == [2, 4]


def test_weak_python_scalars_keep_the_arrays_type():
    assert lax.mul(np.ones(2, np.float16), 2).dtype == np.float16
    assert lax.add(np.ones(2, np.int8), 1).dtype == np.int8
    assert lax.shift_left(np.ones(2, np.uint16), 3).dtype == np.uint16
    assert lax.pow(np.full(2, 2.0, np.float32), 0.5).dtype == np.float32
    g = trace(lambda x: lax.max(x, 0.0), "bf16[3]")
    assert "bf16[3]" in g.as_text() and "max(" in g.as_text()


def test_implicit_broadcast_with_broadcast_dimensions():
    m = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    rows = lax.add(m, np.array([10, 20], np.int32), broadcast_dimensions=(0,))
    assert rows.tolist() == [[11, 12, 13], [24, 25, 26]]
    cols = lax.add(np.array([10, 20, 30], np.int32), m, broadcast_dimensions=(1,))
    assert cols.tolist() == [[11, 22, 33], [14, 25, 36]]
    # degenerate (size-1) dimensions broadcast along each other
    assert lax.mul(np.ones((2, 1)), np.ones((1, 3))).shape == (2, 3)
    assert lax.gt(np.ones((4, 1, 3)), np.zeros(5), broadcast_dimensions=(1,)).shape == (4, 5, 3)


# --------------------------------------------------------------------------
# shape errors, raised when tracing
# --------------------------------------------------------------------------

INVALID = [
    (lambda x, y: lax.add(x, y), ("f32[2,3]", "f32[3,2]"),
     r"add: operand dimensions must be equal \(or 1, to broadcast\): dimension 0 has sizes "
     r"\[2, 3\].*f32\[2,3\]\{1,0\}, f32\[3,2\]\{1,0\}"),
    (lambda x, y: lax.sub(x, y), ("f32[2,3]", "f32[3]"),
     r"sub: operands of different ranks need broadcast_dimensions.*f32\[2,3\].*f32\[3\]"),
    (lambda x, y: lax.mul(x, y, broadcast_dimensions=(0, 1)), ("f32[2,3]", "f32[3]"),
     r"mul: broadcast_dimensions \(0, 1\) must have one entry"),
    (lambda x, y: lax.div(x, y, broadcast_dimensions=(2,)), ("f32[2,3]", "f32[3]"),
     r"div: broadcast_dimensions \(2,\) must be strictly increasing"),
    (lambda x, y: lax.max(x, y, broadcast_dimensions=(0,)), ("f32[2,3]", "f32[3]"),
     r"max: .*dimension 0 has sizes \[2, 3\]"),
    (lambda x, y: add_p.bind(x, y), ("f32[3]", "f64[3]"), r"add: operand element types must be"),
    (lambda x, y: add_p.bind(x, y), ("f32[3]", "f32[4]"), r"add: operand dimensions must be"),
    (lambda x, y: lax.min(x, y), ("f32[2]", "f32[2,2]"), r"min: operands of different ranks"),
    (lambda x, y: lax.rem(x, y), ("c64[2]", "c64[2]"), r"rem: operand element type c64"),
    (lambda x, y: lax.pow(x, y), ("pred[2]", "pred[2]"), r"pow: operand element type pred"),
    (lambda x, y: lax.sub(x, y), ("pred[2]", "pred[2]"), r"sub: operand element type pred"),
    (lambda x, y: lax.atan2(x, y), ("s32[2]", "s32[2]"), r"atan2: operand element type s32"),
    (lambda x, y: lax.complex(x, y), ("f16[2]", "f16[2]"), r"complex: .*f16 .*f32 or f64"),
    (lambda x, y: lax.bitwise_and(x, y), ("f32[2]", "f32[2]"), r"and: operand element type f32"),
    (lambda x, y: lax.bitwise_or(x, y), ("c64[2]", "c64[2]"), r"or: operand element type c64"),
    (lambda x, y: lax.bitwise_xor(x, y), ("f64[2]", "f64[2]"), r"xor: operand element type f64"),
    (lambda x, y: lax.shift_left(x, y), ("f32[2]", "f32[2]"), r"shift_left: .*f32"),
    (lambda x, y: lax.shift_right_logical(x, y), ("pred[2]", "pred[2]"),
     r"shift_right_logical: .*pred"),
    (lambda x, y: lax.shift_right_arithmetic(x, y), ("s8[2]", "s8[3]"),
     r"shift_right_arithmetic: .*dimension 0 has sizes \[2, 3\]"),
    (lambda x: lax.sin(x), ("s32[2]",), r"sin: operand element type s32"),
    (lambda x: lax.cos(x), ("pred[2]",), r"cos: operand element type pred"),
    (lambda x: lax.tan(x), ("u8[2]",), r"tan: operand element type u8"),
    (lambda x: lax.tanh(x), ("s8[2]",), r"tanh: operand element type s8"),
    (lambda x: lax.exp(x), ("s64[2]",), r"exp: operand element type s64"),
    (lambda x: lax.expm1(x), ("s16[2]",), r"expm1: operand element type s16"),
    (lambda x: lax.log(x), ("u32[2]",), r"log: operand element type u32"),
    (lambda x: lax.log1p(x), ("pred[]",), r"log1p: operand element type pred"),
    (lambda x: lax.logistic(x), ("s32[]",), r"logistic: operand element type s32"),
    (lambda x: lax.sqrt(x), ("s32[]",), r"sqrt: operand element type s32"),
    (lambda x: lax.rsqrt(x), ("u64[]",), r"rsqrt: operand element type u64"),
    (lambda x: lax.cbrt(x), ("s32[]",), r"cbrt: operand element type s32"),
    (lambda x: lax.erf(x), ("c64[2]",), r"erf: operand element type c64"),
    (lambda x: lax.ceil(x), ("s32[2]",), r"ceil: operand element type s32"),
    (lambda x: lax.floor(x), ("c64[2]",), r"floor: operand element type c64"),
    (lambda x: lax.round(x), ("s32[2]",), r"round: operand element type s32"),
    (lambda x: lax.round_nearest_even(x), ("u8[2]",), r"round: operand element type u8"),
    (lambda x: lax.round(x, "up"), ("f32[2]",), r"round: rounding_method 'up'"),
    (lambda x: lax.is_finite(x), ("s32[2]",), r"is_finite: operand element type s32"),
    (lambda x: lax.real(x), ("s32[2]",), r"real: operand element type s32"),
    (lambda x: lax.imag(x), ("pred[2]",), r"imag: operand element type pred"),
    (lambda x: lax.abs(x), ("u32[2]",), r"abs: operand element type u32"),
    (lambda x: lax.sign(x), ("u8[2]",), r"sign: operand element type u8"),
    (lambda x: lax.neg(x), ("pred[2]",), r"neg: operand element type pred"),
    (lambda x: lax.bitwise_not(x), ("f32[2]",), r"not: operand element type f32"),
    (lambda x: lax.population_count(x), ("f32[2]",), r"population_count: .*f32"),
    (lambda x: lax.clz(x), ("pred[2]",), r"clz: operand element type pred"),
    (lambda x, y: lax.compare(x, y, "XX"), ("f32[2]", "f32[2]"), r"compare: .*'XX' is not one"),
    (lambda x, y: lax.lt(x, y), ("c64[2]", "c64[2]"), r"compare: .*LT is not defined for comp"),
    (lambda x, y: compare_p.bind(x, y, direction="EQ"), ("f32[2]", "f32[3]"),
     r"compare: operand dimensions must be equal.*f32\[2\].*f32\[3\]"),
    (lambda p, x, y: lax.select(p, x, y), ("s32[2]", "f32[2]", "f32[2]"),
     r"select: pred must have element type pred, got s32"),
    (lambda p, x, y: lax.select(p, x, y), ("pred[3]", "f32[2]", "f32[2]"),
     r"select: pred must be a scalar or have the dimensions"),
    (lambda p, x, y: lax.select(p, x, y), ("pred[2]", "f32[2]", "f32[3]"),
     r"select: operand dimensions must be equal"),
    (lambda a, x, b: lax.clamp(a, x, b), ("f32[2]", "f32[3]", "f32[]"),
     r"clamp: min must be a scalar or have the operand's dimensions"),
    (lambda a, x, b: lax.clamp(a, x, b), ("f32[]", "f32[3]", "f32[2]"),
     r"clamp: max must be a scalar"),
    (lambda x: lax.convert_element_type(x, PT.TUPLE), ("f32[2]",),
     r"convert_element_type: new_dtype must be an array element type"),
    (lambda x: lax.bitcast_convert_type(x, np.float32), ("f16[10,3]",),
     r"bitcast_convert_type: converting f16 to the wider f32 needs a last dimension of size 2"),
    (lambda x: lax.bitcast_convert_type(x, np.float64), ("s8[]",),
     r"bitcast_convert_type: .*last dimension of size 8.*s8\[\]"),
    (lambda x: lax.bitcast_convert_type(x, PT.TOKEN), ("s8[2]",),
     r"bitcast_convert_type: new_dtype must be an array element type"),
    (lambda x: lax.reduce_precision(x, 5, 10), ("s32[2]",),
     r"reduce_precision: operand element type s32"),
    (lambda x: lax.reduce_precision(x, 0, 10), ("f32[2]",),
     r"reduce_precision: exponent_bits must be at least 1, got 0.*f32\[2\]"),
    (lambda x: lax.reduce_precision(x, 5, -1), ("f32[2]",),
     r"reduce_precision: mantissa_bits must be non-negative, got -1"),
]


@pytest.mark.parametrize("fn, specs, pattern", INVALID,
                         ids=[f"{i}-{p[:24]}" for i, (_, _, p) in enumerate(INVALID)])
def test_invalid_calls_raise_shape_errors_when_tracing(fn, specs, pattern):
    with pytest.raises(ShapeError, match=pattern):
        trace(fn, *specs)


# --------------------------------------------------------------------------
# properties against independent formulations
# --------------------------------------------------------------------------

def _wrap(v: int, dtype) -> int:
    """A Python integer reduced to ``dtype``'s two's-complement range."""
    bits = np.dtype(dtype).itemsize * 8
    v &= (1 << bits) - 1
    if np.dtype(dtype).kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _ints(dtype, n: int) -> np.ndarray:
    info = np.iinfo(dtype)
    edges = [info.min, info.max, 0, 1, -1, 2, -2, info.min + 1] if info.min else [0, 1, 2,
                                                                                   info.max]
    edges = [_wrap(e, dtype) for e in edges]
    rand = RNG.integers(info.min, info.max, size=n, dtype=dtype, endpoint=True)
    small = RNG.integers(max(info.min, -9), 10, size=n).astype(dtype)
    return np.concatenate([np.array(edges, dtype), rand, small])


def _pairs(dtype, n=40):
    x = _ints(dtype, n)
    y = _ints(dtype, n)
    return np.repeat(x, 3)[: 3 * len(x)], np.tile(y, 3)[: 3 * len(x)]


def _ref_div(a: int, b: int, dtype) -> int:
    if b == 0:
        return _wrap(-1, dtype)
    q = abs(a) // abs(b)
    return _wrap(q if (a < 0) == (b < 0) else -q, dtype)


def _ref_rem(a: int, b: int, dtype) -> int:
    if b == 0:
        return a
    r = abs(a) % abs(b)
    return _wrap(-r if a < 0 else r, dtype)


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_integer_arithmetic_matches_python_integers(dtype):
    x, y = _pairs(dtype)
    px, py = [int(v) for v in x], [int(v) for v in y]
    checks = {
        lax.add: lambda a, b: _wrap(a + b, dtype), lax.sub: lambda a, b: _wrap(a - b, dtype),
        lax.mul: lambda a, b: _wrap(a * b, dtype), lax.div: lambda a, b: _ref_div(a, b, dtype),
        lax.rem: lambda a, b: _ref_rem(a, b, dtype), lax.max: max, lax.min: min,
        lax.bitwise_and: lambda a, b: _wrap(a & b, dtype),
        lax.bitwise_or: lambda a, b: _wrap(a | b, dtype),
        lax.bitwise_xor: lambda a, b: _wrap(a ^ b, dtype),
    }
    for fn, ref in checks.items():
        got = fn(x, y)
        assert got.dtype == dtype
        assert got.tolist() == [ref(a, b) for a, b in zip(px, py)], fn.__name__


def _ref_pow(a: int, e: int, dtype) -> int:
    if e < 0:
        return 1 if a == 1 else (-1) ** (-e) if a == -1 else 0
    return _wrap(pow(a, e, 1 << (np.dtype(dtype).itemsize * 8)), dtype)


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_integer_pow_matches_python_integers(dtype):
    base = _ints(dtype, 30)
    exponent = RNG.integers(-5 if np.dtype(dtype).kind == "i" else 0, 70, size=len(base))
    exponent = exponent.astype(dtype)
    got = lax.pow(base, exponent)
    assert got.tolist() == [_ref_pow(int(a), int(e), dtype) for a, e in zip(base, exponent)]


def _ref_shifts(a: int, s: int, dtype) -> tuple[int, int, int]:
    bits = np.dtype(dtype).itemsize * 8
    amount = s % (1 << bits)  # read as unsigned
    unsigned = a % (1 << bits)
    signed = _wrap(a, "i%d" % (bits // 8))
    left = 0 if amount >= bits else _wrap(unsigned << amount, dtype)
    logical = 0 if amount >= bits else _wrap(unsigned >> amount, dtype)
    arithmetic = _wrap(signed >> min(amount, bits - 1), dtype)
    return left, logical, arithmetic


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_shifts_match_python_integers(dtype):
    bits = np.dtype(dtype).itemsize * 8
    x = _ints(dtype, 20)
    s = RNG.integers(0, bits + 5, size=len(x)).astype(dtype)
    if np.dtype(dtype).kind == "i":
        s[:3] = -1
    want = [_ref_shifts(int(a), int(b), dtype) for a, b in zip(x, s)]
    assert lax.shift_left(x, s).tolist() == [w[0] for w in want]
    assert lax.shift_right_logical(x, s).tolist() == [w[1] for w in want]
    assert lax.shift_right_arithmetic(x, s).tolist() == [w[2] for w in want]


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_population_count_clz_and_not_match_python_integers(dtype):
    bits = np.dtype(dtype).itemsize * 8
    x = _ints(dtype, 40)
    words = [int(v) % (1 << bits) for v in x]
    assert lax.population_count(x).tolist() == [bin(w).count("1") for w in words]
    assert lax.clz(x).tolist() == [bits - w.bit_length() for w in words]
    assert lax.bitwise_not(x).tolist() == [_wrap(~int(v), dtype) for v in x]
    if np.dtype(dtype).kind == "i":
        assert lax.abs(x).tolist() == [_wrap(abs(int(v)), dtype) for v in x]
        assert lax.sign(x).tolist() == [(int(v) > 0) - (int(v) < 0) for v in x]
    assert lax.neg(x).tolist() == [_wrap(-int(v), dtype) for v in x]


def _finite(dtype, n=60) -> np.ndarray:
    special = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5]
    return np.concatenate([special, RNG.standard_normal(n) * 10.0 ** RNG.integers(-3, 4, n)]
                          ).astype(dtype)


def _floats(dtype, n=60) -> np.ndarray:
    """Finite values, then inf, -inf and NaN."""
    return np.concatenate([_finite(dtype, n), np.array([np.inf, -np.inf, np.nan], dtype)])


_MATH = {
    lax.cos: math.cos, lax.sin: math.sin, lax.tan: math.tan, lax.tanh: math.tanh,
    lax.exp: math.exp, lax.expm1: math.expm1, lax.erf: math.erf,
    lax.logistic: lambda v: 1 / (1 + math.exp(-v)) if v > -700 else 0.0,
    lax.cbrt: lambda v: math.copysign(abs(v) ** (1 / 3), v),
    lax.ceil: math.ceil, lax.floor: math.floor,
}
_POSITIVE_MATH = {lax.log: math.log, lax.log1p: math.log1p, lax.sqrt: math.sqrt,
                  lax.rsqrt: lambda v: 1 / math.sqrt(v)}


def _math_ref(fn, values):
    out = []
    for v in values:
        try:
            out.append(float(fn(float(v))))
        except OverflowError:
            out.append(math.inf)
    return np.array(out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, "bf16"])
def test_float_unary_ops_match_the_math_module(dtype):
    rtol = {np.float32: 2e-6, np.float64: 1e-13, np.float16: 1e-3, "bf16": 8e-3}[dtype]
    finite = _finite(np.float32)
    finite = finite[np.abs(finite) < (10 if dtype == np.float16 else 80)]  # exp stays finite
    positive = np.abs(finite) + 0.25
    for table, values in ((_MATH, finite), (_POSITIVE_MATH, positive)):
        for fn, ref in table.items():
            if dtype == "bf16":
                rounded = round_to_bf16(values)
                got, want = as_f32(fn(bf16(rounded))), _math_ref(ref, rounded)
            else:
                rounded = values.astype(dtype)
                got, want = fn(rounded), _math_ref(ref, rounded)
                assert got.dtype == dtype
            np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol,
                                       atol=rtol * 1e-3, err_msg=fn.__name__)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rounding_and_is_finite_match_decimal_and_python(dtype):
    x = np.concatenate([np.arange(-6, 6) + 0.5, _finite(dtype) * 3]).astype(dtype)
    half_up = [float(decimal.Decimal(float(v)).quantize(0, decimal.ROUND_HALF_UP)) for v in x]
    assert np.array_equal(lax.round(x), np.array(half_up, dtype))
    assert np.array_equal(lax.round_nearest_even(x), np.array([round(float(v)) for v in x],
                                                              dtype))
    specials = _floats(dtype)
    assert lax.is_finite(specials).tolist() == [math.isfinite(v) for v in specials]


def _total_key(v: float) -> tuple:
    if math.isnan(v):
        return (-2 if math.copysign(1, v) < 0 else 2, 0.0, 0)
    return (0, v, int(math.copysign(1, v)) if v == 0 else 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, "bf16"])
def test_total_order_comparisons_match_a_sort_key(dtype):
    values = np.concatenate([_floats(np.float32, 10), [-np.nan]])
    values[-1] = -abs(values[-1])
    x, y = np.repeat(values, len(values)), np.tile(values, len(values))
    if dtype == "bf16":
        args = bf16(x), bf16(y)
        x, y = round_to_bf16(x), round_to_bf16(y)
    else:
        x, y = x.astype(dtype), y.astype(dtype)
        args = x, y
    kx, ky = [_total_key(float(v)) for v in x], [_total_key(float(v)) for v in y]
    assert lax.lt_total_order(*args).tolist() == [a < b for a, b in zip(kx, ky)]
    assert lax.ge_total_order(*args).tolist() == [a >= b for a, b in zip(kx, ky)]
    assert lax.eq_total_order(*args).tolist() == [a == b for a, b in zip(kx, ky)]
    # IEEE directions
    assert lax.le(*args).tolist() == [float(a) <= float(b) for a, b in zip(x, y)]
    assert lax.ne(*args).tolist() == [float(a) != float(b) for a, b in zip(x, y)]


def test_total_order_of_complex_numbers_is_lexicographic():
    a = np.array([1 + 5j, 1 + 2j, complex(-0.0, 1), 2 + 0j], np.complex64)
    b = np.array([1 + 2j, 1 + 2j, 0.0 + 0j, 1 + 9j], np.complex64)
    assert lax.lt_total_order(a, b).tolist() == [False, False, True, False]
    assert lax.ge_total_order(a, b).tolist() == [True, True, False, True]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_binary_float_ops_match_the_math_module(dtype):
    x, y = _floats(dtype, 30), np.roll(_floats(dtype, 30), 5)
    pairs = list(zip(x.tolist(), y.tolist()))
    nan = [math.isnan(a) or math.isnan(b) for a, b in pairs]
    fmod = [math.nan if n or not b or math.isinf(a) else math.fmod(a, b)
            for (a, b), n in zip(pairs, nan)]
    np.testing.assert_array_equal(lax.rem(x, y), np.array(fmod, dtype))  # exact
    angle = [math.nan if n else math.atan2(a, b) for (a, b), n in zip(pairs, nan)]
    np.testing.assert_allclose(lax.atan2(x, y), np.array(angle, dtype), rtol=2e-7, atol=0)
    base, exponent = np.abs(_finite(dtype, 30)) + 0.1, RNG.uniform(-5, 5, 36).astype(dtype)
    want = [math.pow(a, b) for a, b in zip(base.tolist(), exponent.tolist())]
    np.testing.assert_allclose(lax.pow(base, exponent), np.array(want, dtype), rtol=1e-6)


def test_complex_ops_match_cmath():
    z = (RNG.standard_normal(12) + 1j * RNG.standard_normal(12)).astype(np.complex128)
    w = (RNG.standard_normal(12) + 1j * RNG.standard_normal(12)).astype(np.complex128)
    unary = {lax.exp: cmath.exp, lax.log: cmath.log, lax.sqrt: cmath.sqrt, lax.sin: cmath.sin,
             lax.cos: cmath.cos, lax.tan: cmath.tan, lax.tanh: cmath.tanh,
             lax.log1p: lambda v: cmath.log(1 + v), lax.expm1: lambda v: cmath.exp(v) - 1,
             lax.logistic: lambda v: 1 / (1 + cmath.exp(-v)),
             lax.rsqrt: lambda v: 1 / cmath.sqrt(v),
             lax.cbrt: lambda v: cmath.exp(cmath.log(v) / 3),
             lax.sign: lambda v: v / abs(v), lax.abs: abs, lax.neg: lambda v: -v}
    for fn, ref in unary.items():
        np.testing.assert_allclose(fn(z), [ref(v) for v in z], rtol=1e-12, err_msg=fn.__name__)
    binary = {lax.add: lambda a, b: a + b, lax.mul: lambda a, b: a * b,
              lax.div: lambda a, b: a / b, lax.pow: lambda a, b: a ** b,
              lax.atan2: lambda y, x: -1j * cmath.log((x + 1j * y) / cmath.sqrt(x * x + y * y))}
    for fn, ref in binary.items():
        np.testing.assert_allclose(fn(z, w), [ref(a, b) for a, b in zip(z, w)], rtol=1e-12,
                                   err_msg=fn.__name__)
    assert lax.sign(np.array([0j, complex(np.nan, 1)])).tolist()[0] == 0


@pytest.mark.parametrize("src, dst", [(np.float32, np.int32), (np.float64, np.int8),
                                      (np.float32, np.uint16), (np.float64, np.int64),
                                      (np.float16, np.uint64), (np.float64, np.uint32)])
def test_float_to_int_conversion_saturates(src, dst):
    x = np.concatenate([_floats(np.float64) * 1e8, [1e30, -1e30, 2.0 ** 63, -2.0 ** 63]])
    with np.errstate(over="ignore"):
        x = x.astype(src)  # f16 overflows to inf
    info = np.iinfo(dst)
    want = [0 if math.isnan(v) else int(min(max(v, info.min), info.max)) if math.isinf(v)
            else min(max(math.trunc(v), info.min), info.max) for v in x.tolist()]
    assert lax.convert_element_type(x, dst).tolist() == want


@pytest.mark.parametrize("src, dst", [(np.float32, np.float16), (np.int32, np.uint8),
                                      (np.float64, np.int16), (np.complex64, np.uint32),
                                      (np.bool_, np.float64), (np.uint64, np.int8)])
def test_bitcast_convert_type_matches_byte_reinterpretation(src, dst):
    shape = (3, 8) if np.dtype(src).itemsize < np.dtype(dst).itemsize else (3, 2)
    ratio = np.dtype(dst).itemsize / np.dtype(src).itemsize
    if ratio > 1:
        shape = (3, int(ratio))
    raw = RNG.integers(0, 256, size=int(np.prod(shape)) * np.dtype(src).itemsize, dtype=np.uint8)
    if np.dtype(src) == np.bool_:
        raw = raw % 2
    x = np.frombuffer(raw.tobytes(), src).reshape(shape)
    got = lax.bitcast_convert_type(x, dst)
    want = np.frombuffer(x.tobytes(), dst)
    assert got.size == want.size
    assert got.tobytes() == want.tobytes()


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
def test_reduce_precision_matches_narrower_float_types():
    x = np.concatenate([_floats(np.float64, 200) * 10.0 ** RNG.integers(-30, 30, 209),
                        [7e4, -7e4, 3.5e38, 1e300]])
    x = x[~np.isnan(x)]
    # to f32's format: NumPy's f64 -> f32 cast, away from f32's denormals (XLA flushes them)
    normal = x[(np.abs(x) >= 2.0 ** -126) | (x == 0)]
    want = normal.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(lax.reduce_precision(normal, 8, 23), want)
    # to bf16's format from f32: bf16 rounding (ties to even), denormals included
    f = x.astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(f, 8, 7), round_to_bf16(f))
    # to f16's format from f32, in f16's normal range or beyond it
    h = f[(np.abs(f) >= 2.0 ** -14) | (f == 0)]
    np.testing.assert_array_equal(lax.reduce_precision(h, 5, 10),
                                  h.astype(np.float16).astype(np.float32))


def test_implicit_broadcast_matches_numpy_broadcasting():
    for _ in range(20):
        rank = int(RNG.integers(1, 4))
        dims = tuple(int(d) for d in RNG.integers(1, 4, size=rank))
        kept = sorted(RNG.choice(rank, size=int(RNG.integers(0, rank + 1)), replace=False))
        small_dims = tuple(dims[d] if RNG.random() < 0.7 else 1 for d in kept)
        big, small = RNG.standard_normal(dims), RNG.standard_normal(small_dims)
        expanded = small.reshape([small_dims[kept.index(d)] if d in kept else 1
                                  for d in range(rank)])
        got = lax.sub(small, big, broadcast_dimensions=tuple(int(k) for k in kept))
        np.testing.assert_array_equal(got, expanded - big)


# --------------------------------------------------------------------------
# the NumPy layer, against NumPy itself
# --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.uint16, np.float32, np.float64])
def test_numpy_layer_arithmetic_matches_numpy(dtype):
    x = _ints(np.int8, 30).astype(dtype) if np.dtype(dtype).kind in "iu" else _finite(dtype)
    y = np.roll(x, 7)
    y = np.where(y == 0, 3, y).astype(dtype)
    if np.dtype(dtype).kind == "u":
        x, y = np.abs(x), np.abs(y)
    with np.errstate(all="ignore"):
        for ours, theirs in ((xnp.remainder, np.remainder), (xnp.floor_divide, np.floor_divide),
                             (xnp.fmod, np.fmod), (xnp.mod, np.mod)):
            got, want = ours(x, y), theirs(x, y)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want, err_msg=ours.__name__)
    lo = 1 if np.dtype(dtype).kind == "u" else -5
    np.testing.assert_array_equal(xnp.clip(x, lo, 7), np.clip(x, lo, 7).astype(dtype))
    np.testing.assert_array_equal(xnp.abs(x), np.abs(x))
    np.testing.assert_array_equal(xnp.square(x), np.square(x))
    np.testing.assert_array_equal(xnp.sign(x), np.sign(x))


def test_numpy_layer_operators_on_traced_values():
    def f(x, y, b):
        return (x % y, y % 3, 7 % y, x ** 2, 2 ** abs(y), x // y, -7 // y, abs(x), ~x, x & y,
                3 | x, x ^ 5, x << 2, x >> 1, b & True, ~b)
    x = np.array([-9, -4, 0, 5, 11], np.int32)
    y = np.array([4, -3, 2, -2, 3], np.int32)
    b = np.array([True, False, True, True, False])
    g = make_graph(f)(x, y, b)
    got = eval_graph(g, x, y, b)
    want = f(x, y, b)
    assert len(got) == len(want)
    for ours, theirs in zip(got, want):
        np.testing.assert_array_equal(ours, theirs)
    text = g.as_text()
    for name in ("rem(", "pow(", "div(", "abs(", "not(", "and(", "or(", "xor(", "shift_left(",
                 "shift_right_arithmetic("):
        assert name in text


def test_numpy_layer_math_functions_match_numpy():
    x = _finite(np.float64)
    ints = np.array([-3, 0, 2, 7], np.int32)
    pos = np.abs(x) + 0.1
    with np.errstate(all="ignore"):
        for ours, theirs, arg in ((xnp.sin, np.sin, x), (xnp.cos, np.cos, x),
                                  (xnp.tan, np.tan, x), (xnp.sqrt, np.sqrt, pos),
                                  (xnp.cbrt, np.cbrt, x), (xnp.expm1, np.expm1, x),
                                  (xnp.log1p, np.log1p, pos), (xnp.sinh, np.sinh, x),
                                  (xnp.cosh, np.cosh, x),
                                  (xnp.floor, np.floor, x), (xnp.ceil, np.ceil, x),
                                  (xnp.rint, np.rint, x), (xnp.trunc, np.trunc, x),
                                  (xnp.reciprocal, np.reciprocal, pos),
                                  (xnp.isfinite, np.isfinite, _floats(np.float64)),
                                  (xnp.isnan, np.isnan, _floats(np.float64)),
                                  (xnp.isinf, np.isinf, _floats(np.float64))):
            np.testing.assert_allclose(ours(arg), theirs(arg), rtol=1e-12, err_msg=ours.__name__)
    np.testing.assert_array_equal(xnp.round(x * 100, 1), np.round(x * 100, 1))
    np.testing.assert_array_equal(xnp.round(x * 100, -1), np.round(x * 100, -1))
    tens = np.array([15, 25, -35, 44, 7], np.int32)
    np.testing.assert_array_equal(xnp.round(tens, -1), np.round(tens, -1))
    np.testing.assert_allclose(xnp.arctan2(x, np.roll(x, 3)), np.arctan2(x, np.roll(x, 3)))
    np.testing.assert_allclose(xnp.sin(ints), np.sin(ints).astype(np.float32), rtol=1e-6)
    assert xnp.sin(ints).dtype == np.float32
    np.testing.assert_array_equal(xnp.power(ints, 3), np.power(ints, 3))
    np.testing.assert_array_equal(xnp.right_shift(ints, 1), np.right_shift(ints, 1))
    np.testing.assert_array_equal(xnp.left_shift(ints, 2), np.left_shift(ints, 2))
    u = np.array([200, 7], np.uint8)
    np.testing.assert_array_equal(xnp.right_shift(u, 1), np.right_shift(u, 1))
    np.testing.assert_array_equal(xnp.bitwise_not(ints), np.bitwise_not(ints))
    b1, b2 = np.array([0, 2, 0, -1]), np.array([0.0, 0.0, 1.5, 2.0])
    for ours, theirs in ((xnp.logical_and, np.logical_and), (xnp.logical_or, np.logical_or),
                         (xnp.logical_xor, np.logical_xor)):
        np.testing.assert_array_equal(ours(b1, b2), theirs(b1, b2))
    np.testing.assert_array_equal(xnp.logical_not(b2), np.logical_not(b2))
    z = np.array([1 + 2j, -3 - 0.5j], np.complex64)
    np.testing.assert_array_equal(xnp.conj(z), np.conj(z))
    np.testing.assert_array_equal(xnp.real(z), np.real(z))
    np.testing.assert_array_equal(xnp.imag(z), np.imag(z))
    np.testing.assert_array_equal(xnp.imag(ints), np.imag(ints))
    np.testing.assert_array_equal(xnp.abs(z), np.abs(z))
    np.testing.assert_array_equal(xnp.isfinite(np.array([np.inf + 0j, 1j])), [False, True])


def test_numpy_layer_broadcasts_and_rejects_bad_kinds():
    m, v = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 4.0])
    np.testing.assert_array_equal(xnp.remainder(m, v), np.remainder(m, v))
    np.testing.assert_array_equal(xnp.power(v, m), np.power(v, m))
    with pytest.raises(ShapeError, match=r"broadcast: shapes \(2, 3\), \(2,\) cannot be"):
        xnp.fmod(m, np.ones(2))
    with pytest.raises(TypeError, match="bitwise_and is only defined for integers"):
        xnp.bitwise_and(v, v)


# --------------------------------------------------------------------------
# tracing: every op is recorded and printed
# --------------------------------------------------------------------------

TRACED = [
    (lax.add, "add", 2, "f32"), (lax.sub, "sub", 2, "s8"), (lax.mul, "mul", 2, "c64"),
    (lax.div, "div", 2, "u32"), (lax.rem, "rem", 2, "f64"), (lax.pow, "pow", 2, "s32"),
    (lax.max, "max", 2, "bf16"), (lax.min, "min", 2, "f16"), (lax.atan2, "atan2", 2, "f32"),
    (lax.complex, "complex", 2, "f64"), (lax.bitwise_and, "and", 2, "pred"),
    (lax.bitwise_or, "or", 2, "u8"), (lax.bitwise_xor, "xor", 2, "s64"),
    (lax.shift_left, "shift_left", 2, "s16"),
    (lax.shift_right_arithmetic, "shift_right_arithmetic", 2, "s32"),
    (lax.shift_right_logical, "shift_right_logical", 2, "u64"),
    (lax.eq, "direction=EQ", 2, "f32"), (lax.ne, "direction=NE", 2, "c128"),
    (lax.lt, "direction=LT", 2, "s32"), (lax.le, "direction=LE", 2, "u8"),
    (lax.gt, "direction=GT", 2, "f16"), (lax.ge, "direction=GE", 2, "pred"),
    (lax.lt_total_order, "total_order=true", 2, "f32"),
    (lax.abs, "abs", 1, "c64"), (lax.ceil, "ceil", 1, "f32"), (lax.floor, "floor", 1, "bf16"),
    (lax.cbrt, "cbrt", 1, "f64"), (lax.cos, "cos", 1, "f32"), (lax.sin, "sin", 1, "f32"),
    (lax.tan, "tan", 1, "f32"), (lax.erf, "erf", 1, "f32"), (lax.exp, "exp", 1, "f32"),
    (lax.expm1, "expm1", 1, "f32"), (lax.log, "log", 1, "f32"), (lax.log1p, "log1p", 1, "f32"),
    (lax.logistic, "logistic", 1, "f32"), (lax.is_finite, "is_finite", 1, "f32"),
    (lax.real, "real", 1, "c64"), (lax.imag, "imag", 1, "f32"), (lax.neg, "neg", 1, "s32"),
    (lax.sign, "sign", 1, "f32"), (lax.sqrt, "sqrt", 1, "f32"), (lax.rsqrt, "rsqrt", 1, "f32"),
    (lax.tanh, "tanh", 1, "f32"), (lax.bitwise_not, "not", 1, "s32"),
    (lax.population_count, "population_count", 1, "u32"), (lax.clz, "clz", 1, "s64"),
    (lax.round, "rounding_method=AWAY_FROM_ZERO", 1, "f32"),
    (lax.round_nearest_even, "rounding_method=TO_NEAREST_EVEN", 1, "f64"),
    (lambda x: lax.convert_element_type(x, np.int8), "convert_element_type", 1, "f32"),
    (lambda x: lax.bitcast_convert_type(x, np.int32), "bitcast_convert_type", 1, "f32"),
    (lambda x: lax.reduce_precision(x, 5, 10), "exponent_bits=5, mantissa_bits=10", 1, "f32"),
    (lambda x: lax.clamp(0.0, x, 1.0), "clamp", 1, "f32"),
    (lambda x: lax.select(lax.gt(x, 0), x, lax.neg(x)), "select", 1, "f32"),
]


@pytest.mark.parametrize("fn, text, arity, dtype", TRACED,
                         ids=[t for _, t, _, _ in TRACED])
def test_every_op_traces_and_prints(fn, text, arity, dtype):
    g = trace(fn, *[f"{dtype}[2,3]"] * arity)
    printed = g.as_text()
    assert text in printed
    assert "operand_types" not in printed


def test_traced_graphs_evaluate_to_the_eager_results():
    def f(x, y):
        return lax.clamp(-1.0, lax.atan2(lax.sin(x), lax.logistic(y)), 1.0), \
            lax.round(lax.mul(x, 3.0)), lax.reduce_precision(lax.exp(y), 5, 2)
    x, y = RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal((3, 4))
    y = y.astype(np.float32)
    g = make_graph(f)(x, y)
    for ours, eager in zip(eval_graph(g, x, y), f(x, y)):
        np.testing.assert_array_equal(ours, eager)
