"""Compiled element-wise ops (compile/lowering/elementwise.py) against their
reference semantics (primitives/elementwise*.py): every op for every element
type it admits, on inputs crossing the special values (0, -0, +-inf, NaN,
denormals, INT_MIN, -1, shift amounts past the width, halves for rounding,
arguments beyond the trigonometric reduction bound), inputs and outputs in
non-default layouts, bitcasts between widths, and the scalar expressions
inlined into a reducer.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import numxla.compile.lowering.elementwise as kew
import numxla.primitives as lax
from numxla.compile import device_put, jit
from numxla.compile.codegen import scalar_exprs
from numxla.tracer.core import ShapeError, bf16_array
from numxla.tracer.shapes import PrimitiveType as PT, bf16_to_f32

rng = np.random.default_rng(11)

ALL_TYPES = [PT.PRED, PT.S8, PT.S16, PT.S32, PT.S64, PT.U8, PT.U16, PT.U32, PT.U64,
             PT.F16, PT.BF16, PT.F32, PT.F64, PT.C64, PT.C128]


# -- inputs ----------------------------------------------------------------------------

def _float_specials(t: PT) -> list[float]:
    info = np.finfo(np.float32 if t in (PT.BF16, PT.F32) else
                    np.float16 if t is PT.F16 else np.float64)
    big = {PT.F16: 3000.0, PT.BF16: 3.0e6, PT.F32: 3.0e6, PT.F64: 1.0e7}[t]  # past the trig bound
    return [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -7.25, 100.0, np.inf, -np.inf,
            np.nan, float(info.smallest_subnormal), -float(info.smallest_normal), float(info.max),
            big, -big, 1.5707963267948966, 0.1]


def _int_specials(t: PT) -> list[int]:
    info = np.iinfo(t.numpy_dtype)
    bits = t.bit_width
    values = [0, 1, 2, 3, 7, bits - 1, bits, bits + 1, 100, info.max, info.max - 1, info.min]
    if t.is_signed:
        values += [-1, -2, -7, info.min + 1, -bits]
    return [v for v in values if info.min <= v <= info.max]


def as_input(values, t: PT) -> np.ndarray:
    if t is PT.BF16:
        return bf16_array(np.asarray(values, np.float32))
    return np.asarray(values, dtype=t.numpy_dtype)


def cross(t: PT) -> tuple[np.ndarray, np.ndarray]:
    """x, y: every pair of special values (2-D, n x n)."""
    if t is PT.PRED:
        s = [False, True]
    elif t.is_integral:
        s = _int_specials(t)
    elif t.is_complex:
        r = [0.0, -0.0, 1.0, -1.5, 2.5, np.inf, -np.inf, np.nan, 3.0, 0.25]
        s = [complex(a, b) for a, b in zip(r, r[3:] + r[:3])] + [1 + 1j, -2 + 0.5j, 1e-3j]
    else:
        s = _float_specials(t)
    n = len(s)
    x = [[s[i] for j in range(n)] for i in range(n)]
    y = [[s[j] for j in range(n)] for i in range(n)]
    return as_input(x, t), as_input(y, t)


# -- comparison ------------------------------------------------------------------------

def _values(a: np.ndarray, t: PT) -> np.ndarray:
    a = np.asarray(a)
    return bf16_to_f32(a) if t is PT.BF16 else a


def _close_real(got, want, rtol, atol, exact, where):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    assert np.array_equal(nan_g, nan_w), f"{where}: NaN at {np.argwhere(nan_g != nan_w)[:5]}"
    g, w = got[~nan_g], want[~nan_w]
    if exact:
        bad = (g != w) | (np.signbit(g) != np.signbit(w))
    else:
        inf = np.isinf(w) | np.isinf(g)
        with np.errstate(invalid="ignore"):
            bad = np.where(inf, g != w, np.abs(g - w) > atol + rtol * np.abs(w))
    if bad.any():
        i = np.argwhere(bad)[:5].ravel()
        raise AssertionError(f"{where}: got {g[i]} want {w[i]}")


def assert_matches(got, want, t: PT, exact: bool, where: str) -> None:
    """``got`` (compiled) against ``want`` (reference), of result type ``t``."""
    got_a, want_a = np.asarray(got), np.asarray(want)
    assert got_a.shape == want_a.shape, f"{where}: shape {got_a.shape} != {want_a.shape}"
    assert got_a.dtype == want_a.dtype, f"{where}: dtype {got_a.dtype} != {want_a.dtype}"
    if t is PT.PRED or t.is_integral:
        assert np.array_equal(got_a, want_a), f"{where}: {got_a} != {want_a}"
        return
    g, w = _values(got_a, t), _values(want_a, t)
    if t.is_complex:
        rtol = 2e-5 if t is PT.C64 else 1e-12
        _close_real(g.real, w.real, rtol, 1e-30 + 4 * rtol * np.abs(w).max(initial=0,
                    where=np.isfinite(w)), exact, where + " (real)")
        _close_real(g.imag, w.imag, rtol, 1e-30 + 4 * rtol * np.abs(w).max(initial=0,
                    where=np.isfinite(w)), exact, where + " (imag)")
        return
    rtol = {PT.F16: 1e-3, PT.BF16: 8e-3, PT.F32: 1e-6, PT.F64: 1e-14}[t]
    _close_real(g, w, rtol, 1e-37 if t is not PT.F64 else 1e-300, exact, where)


# -- the op set --------------------------------------------------------------------------

DIRECTIONS = ("EQ", "NE", "LT", "LE", "GT", "GE")
BINARY = {
    "add": lax.add, "sub": lax.sub, "mul": lax.mul, "div": lax.div, "rem": lax.rem,
    "pow": lax.pow, "max": lax.max, "min": lax.min, "atan2": lax.atan2,
    "and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
    "shift_left": lax.shift_left, "shift_right_arithmetic": lax.shift_right_arithmetic,
    "shift_right_logical": lax.shift_right_logical, "complex": lax.complex,
    **{f"compare_{d}": (lambda d: lambda a, b: lax.compare(a, b, d))(d) for d in DIRECTIONS},
    **{f"compare_total_{d}": (lambda d: lambda a, b: lax.compare(a, b, d, total_order=True))(d)
       for d in DIRECTIONS},
    "select": lambda a, b: lax.select(lax.ne(a, b), a, b),
    "select_scalar_pred": lambda a, b: lax.select(np.bool_(True), a, b),
    "clamp": lambda a, b: lax.clamp(lax.min(a, b), a, lax.max(a, b)),
    "clamp_scalar": lambda a, b: lax.clamp(_element(b, 1), a, _element(b, -1)),
}
UNARY = {
    "neg": lax.neg, "abs": lax.abs, "sign": lax.sign, "ceil": lax.ceil, "floor": lax.floor,
    "round_afz": lax.round, "round_even": lax.round_nearest_even, "cbrt": lax.cbrt,
    "cos": lax.cos, "sin": lax.sin, "tan": lax.tan, "tanh": lax.tanh, "erf": lax.erf,
    "exp": lax.exp, "expm1": lax.expm1, "log": lax.log, "log1p": lax.log1p,
    "logistic": lax.logistic, "sqrt": lax.sqrt, "rsqrt": lax.rsqrt, "is_finite": lax.is_finite,
    "real": lax.real, "imag": lax.imag, "not": lax.bitwise_not,
    "population_count": lax.population_count, "clz": lax.clz,
    **{f"convert_{t.short_name}": (lambda t: lambda a: lax.convert_element_type(a, t))(t)
       for t in ALL_TYPES},
    **{f"reduce_precision_{e}_{m}": (lambda e, m: lambda a: lax.reduce_precision(a, e, m))(e, m)
       for e, m in ((5, 10), (8, 7), (3, 2), (11, 52), (8, 23), (4, 0))},
}
def _element(b, j):
    """b[0, j] as a rank-0 value (through the op set: bf16 stays bf16)."""
    j = j % b.shape[1]
    return lax.reshape(lax.slice(b, (0, j), (1, j + 1)), ())


# results equal to the reference bit for bit (up to NaN payloads)
EXACT = {"add", "sub", "neg", "abs", "sign", "ceil", "floor", "round_afz", "round_even", "sqrt",
         "rsqrt", "is_finite", "real", "imag", "complex", "select", "select_scalar_pred", "clamp",
         "clamp_scalar", "max", "min", "rem", "mul", "div"} | \
    {n for n in BINARY if n.startswith("compare")} | \
    {n for n in UNARY if n.startswith(("convert", "reduce_precision"))}


def _admitted(fns: dict, args: tuple) -> dict:
    """The ops whose shape rule admits ``args``, with their reference results."""
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn in fns.items():
            try:
                out[name] = (fn, fn(*args))
            except (ShapeError, TypeError, KeyError):
                pass
    return out


def _result_type(value) -> PT:
    from numxla.tracer.core import abstractify
    return abstractify(value).element_type


# Each op is one loop (0.1-0.3 s of Numba compile): all ops run on one type
# per code path (s8, f32, c64, pred), the others on the ops whose code
# differs by width or format.
_INT_FULL = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "and", "or", "xor",
             "shift_left", "shift_right_arithmetic", "shift_right_logical", "neg", "abs", "sign",
             "not", "population_count", "clz", "compare_LT", "compare_EQ", "compare_total_GE",
             "select", "clamp_scalar"]
_INT_64 = ["mul", "div", "rem", "pow", "shift_left", "shift_right_arithmetic",
           "shift_right_logical", "population_count", "clz", "abs", "sign", "neg", "max",
           "compare_total_GE"]
_INT_SOME = ["div", "rem", "pow", "shift_right_arithmetic", "clz"]
_FLOAT_FULL = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "complex",
               "compare_LT", "compare_EQ", "compare_total_LT", "compare_total_GE", "select",
               "select_scalar_pred", "clamp", "neg", "abs", "sign", "ceil", "floor", "round_afz",
               "round_even", "cbrt", "cos", "sin", "tan", "tanh", "erf", "exp", "expm1", "log",
               "log1p", "logistic", "sqrt", "rsqrt", "is_finite", "real", "imag",
               "reduce_precision_5_10", "reduce_precision_4_0", "reduce_precision_11_52"]
_F64 = ["div", "rem", "pow", "sign", "round_afz", "sin", "tan", "exp", "log1p",
        "compare_total_LT", "reduce_precision_11_52", "complex"]
_HALF = ["add", "div", "exp", "sin", "round_afz", "compare_total_LT", "reduce_precision_3_2",
         "clamp_scalar"]
_COMPLEX_FULL = ["add", "mul", "div", "pow", "compare_EQ", "compare_total_LT", "select", "neg",
                 "abs", "sign", "cbrt", "cos", "sin", "tan", "tanh", "exp", "expm1", "log",
                 "log1p", "logistic", "sqrt", "rsqrt", "real", "imag", "atan2", "max"]
_C128 = ["div", "pow", "tan", "atan2"]
_PRED = ["add", "mul", "max", "min", "xor", "not", "compare_LT", "select", "clamp"]
# Numba's compile time grows faster than linearly with a function's size:
# a few ops per jitted function is cheaper than all of them in one.
_CHUNK = 8
OPS_BY_TYPE = {
    PT.PRED: _PRED, PT.S8: _INT_FULL, PT.S16: _INT_SOME, PT.S32: _INT_SOME, PT.S64: _INT_64,
    PT.U8: _INT_SOME, PT.U16: _INT_SOME, PT.U32: _INT_SOME, PT.U64: _INT_64,
    PT.F16: _HALF, PT.BF16: _HALF, PT.F32: _FLOAT_FULL, PT.F64: _F64,
    PT.C64: _COMPLEX_FULL, PT.C128: _C128,
}


@pytest.mark.parametrize("t", ALL_TYPES, ids=[t.short_name for t in ALL_TYPES])
def test_every_op_matches_the_reference(t, monkeypatch):
    if t.is_complex:  # complex atan2 on its branch cut: compared modulo 2 pi below, not by
        monkeypatch.setenv("NUMXLA_TIERED", "0")   # NUMXLA_TIERED=check's general tolerance
    x, y = cross(t)
    wanted = OPS_BY_TYPE[t]
    binary = _admitted({n: f for n, f in BINARY.items() if n in wanted}, (x, y))
    unary = _admitted({n: f for n, f in UNARY.items() if n in wanted}, (x,))
    missing = set(wanted) - set(binary) - set(unary)
    assert missing <= ({"abs", "sign"} if t.is_unsigned else set()), missing
    ops = [(n, fn, 2) for n, (fn, _) in binary.items()] + \
          [(n, fn, 1) for n, (fn, _) in unary.items()]

    results = []
    for k in range(0, len(ops), _CHUNK):
        part = ops[k:k + _CHUNK]
        results += jit(lambda a, b, part=part: [fn(a, b) if arity == 2 else fn(a)
                                                for _, fn, arity in part])(x, y)
    for (name, _, arity), got in zip(ops, results):
        want = (binary if arity == 2 else unary)[name][1]
        if name == "atan2" and t.is_complex:
            got = _same_branch(np.asarray(got), np.asarray(want))
        exact = name in EXACT and not (t.is_complex and name in ("mul", "div", "sign", "abs",
                                                                 "sqrt", "rsqrt"))
        assert_matches(got, want, _result_type(want), exact, f"{t.short_name} {name}")


def _same_branch(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Complex atan2's real part is an angle: on the branch cut, rounding
    decides between -pi and pi (NumPy's SIMD complex products differ from
    scalar ones in the last bit).  Compare it modulo 2 pi."""
    d = np.remainder(got.real - want.real + np.pi, 2 * np.pi) - np.pi
    real = np.where(np.isfinite(got.real) & np.isfinite(want.real), want.real + d, got.real)
    return (real + 1j * got.imag).astype(got.dtype)


_CONVERT_TARGETS = {
    "int": [PT.PRED, PT.U16, PT.S64, PT.F16, PT.BF16, PT.F64, PT.C64],
    "float": [PT.PRED, PT.S8, PT.U32, PT.S64, PT.U64, PT.F16, PT.BF16, PT.F64, PT.C128],
    "complex": [PT.PRED, PT.S32, PT.F16, PT.F32, PT.C64],
}


@pytest.mark.parametrize("t", [PT.PRED, PT.S8, PT.U64, PT.F16, PT.BF16, PT.F32, PT.F64, PT.C64,
                               PT.C128], ids=lambda t: t.short_name)
def test_convert_element_type(t):
    """Saturating float -> int with NaN -> 0, complex -> real drops the
    imaginary part, -> pred is != 0, one rounding into f16 (from f64 too),
    bf16 through f32, as the reference."""
    x, _ = cross(t)
    kind = "complex" if t.is_complex else "float" if t.is_floating else "int"
    targets = [u for u in _CONVERT_TARGETS[kind] if u is not t] or [PT.F32]
    wants = [lax.convert_element_type(x, u) for u in targets]
    got = jit(lambda a: [lax.convert_element_type(a, u) for u in targets])(x)
    for u, g, w in zip(targets, got, wants):
        assert_matches(g, w, u, True, f"convert {t.short_name} -> {u.short_name}")


def test_convert_rounds_once_into_f16():
    # f64 values just above an f16 rounding midpoint: rounding to f32 first would land on it
    mid = 1.0 + 2.0 ** -11
    x = np.array([mid + 2.0 ** -40, mid - 2.0 ** -40, -(mid + 2.0 ** -40), 65519.99, 65520.0,
                  2.0 ** -25 + 2.0 ** -50, 1e-30, np.nan], np.float64)
    got = np.asarray(jit(lambda a: lax.convert_element_type(a, PT.F16))(x))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, x.astype(np.float16))


# -- bitcasts ------------------------------------------------------------------------------

def _bitcast_targets(t: PT) -> list[PT]:
    """Every type of t's width, u8 (narrower) and a wider type."""
    same = [u for u in ALL_TYPES if u.bit_width == t.bit_width and u is not t]
    narrower = [PT.U8] if t.bit_width > 8 else []
    wider = {8: [PT.F16, PT.S32], 16: [PT.F32, PT.C64], 32: [PT.U64, PT.C128], 64: [PT.C128],
             128: []}[t.bit_width]
    return same + narrower + wider + ([PT.F32, PT.BF16] if t.bit_width == 64 else [])


@pytest.mark.parametrize("t", [PT.PRED, PT.S8, PT.BF16, PT.F16, PT.F32, PT.F64, PT.C64,
                               PT.C128], ids=lambda t: t.short_name)
def test_bitcast_convert_type(t):
    """Same width: the bits reinterpreted (NaN payloads kept); to a narrower
    type a new minor dimension, least significant part first; to a wider
    type the minor dimension is consumed."""
    rows, nbytes = 12, 16
    raw = rng.integers(0, 256, (rows, nbytes), dtype=np.uint8)
    raw[0, :4] = [0, 0, 0xC0, 0x7F]          # a NaN in f32 words
    raw[1, :2] = [0x01, 0x7C]                # a NaN in f16 words
    if t is PT.PRED:
        raw &= 1
    k = t.bit_width // 8
    src = np.asarray(lax.bitcast_convert_type(raw.reshape(rows, nbytes // k, k) if k > 1 else raw,
                                              t))
    src = bf16_array(src) if t is PT.BF16 else src
    targets = _bitcast_targets(t)

    def convert(a, u):
        if u.bit_width > t.bit_width:
            m = u.bit_width // t.bit_width
            a = lax.reshape(a, a.shape[:-1] + (a.shape[-1] // m, m))
        return lax.bitcast_convert_type(a, u)

    wants = [convert(src, u) for u in targets]
    got = jit(lambda a: [convert(a, u) for u in targets])(src)
    for u, g, w in zip(targets, got, wants):
        where = f"bitcast {t.short_name} -> {u.short_name}"
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, where
        if u.is_floating or u.is_complex:
            view = {2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[g.dtype.itemsize]
            gb, wb = np.ascontiguousarray(g).view(view), np.ascontiguousarray(w).view(view)
            if u in (PT.F16, PT.BF16):   # 16-bit stores make NaNs quiet
                nan = np.isnan(_values(w, u))
                assert np.array_equal(np.isnan(_values(g, u)), nan), where
                assert np.array_equal(gb[~nan], wb[~nan]), where
            else:
                assert np.array_equal(gb, wb), where
        else:
            assert np.array_equal(g, w), where


# -- layouts ---------------------------------------------------------------------------

def _layout_ops(a, b, p):
    return [lax.div(a, b), lax.max(a, b), lax.sin(a), lax.select(p, a, b),
            lax.select(np.bool_(False), a, b), lax.clamp(np.float32(-0.5), a, np.float32(0.5)),
            lax.compare(a, b, "LT", total_order=True), lax.convert_element_type(a, PT.S16),
            lax.bitcast_convert_type(a, PT.U8), lax.bitcast_convert_type(a, PT.S32)]


@pytest.mark.parametrize("layout", ["{0,1}", "{0,1:T(2,4)(2,1)}"])
def test_non_default_layouts_in_and_out(layout):
    a = rng.standard_normal((5, 6)).astype(np.float32) * 3
    a[0, 0], a[1, 1], a[2, 2] = np.nan, -0.0, 1e7
    b = rng.standard_normal((5, 6)).astype(np.float32)
    p = rng.random((5, 6)) < 0.5
    want = _layout_ops(a, b, p)
    f = jit(_layout_ops, in_layouts=(layout, layout, layout))
    got = f(device_put(a, layout), device_put(b, layout), p)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_matches(g, w, _result_type(w), False, f"op {i} with inputs in {layout}")

    g = jit(lambda x, y: (lax.mul(x, y), lax.bitcast_convert_type(x, PT.U16)),
            out_layouts=(layout, "{1,0,2}"))(a, b)
    assert_matches(g[0], a * b, PT.F32, True, f"mul out in {layout}")
    np.testing.assert_array_equal(np.asarray(g[1]), a.view(np.uint16).reshape(5, 6, 2))


def test_widening_bitcast_reads_a_permuted_minor_dimension():
    x = rng.integers(0, 2**16, (3, 4, 2), dtype=np.uint16)
    f = jit(lambda v: (lax.bitcast_convert_type(v, PT.F32), lax.bitcast_convert_type(v, PT.S32)),
            in_layouts=("{0,2,1}",))
    got = f(device_put(x, "{0,2,1}"))
    np.testing.assert_array_equal(np.asarray(got[1]), x.view(np.int32).reshape(3, 4))
    np.testing.assert_array_equal(np.asarray(got[0]).view(np.uint32),
                                  x.view(np.uint32).reshape(3, 4))


# -- integer semantics spelled out ------------------------------------------------------

def test_integer_corner_cases():
    i32 = np.iinfo(np.int32)
    a = np.array([7, -7, 7, -7, 5, i32.min, i32.min, 3, -1, 0], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 0, -1, 40, -33], np.int32)

    @jit
    def f(x, y):
        return (lax.div(x, y), lax.rem(x, y), lax.pow(x, y), lax.shift_left(x, y),
                lax.shift_right_arithmetic(x, y), lax.shift_right_logical(x, y),
                lax.abs(x), lax.neg(x), lax.sign(x), lax.clz(x), lax.population_count(x),
                lax.convert_element_type(lax.convert_element_type(x, PT.F32), PT.U8))

    got = [np.asarray(v) for v in f(a, b)]
    np.testing.assert_array_equal(got[0], [3, -3, -3, 3, -1, i32.min, -1, -3, 0, 0])
    np.testing.assert_array_equal(got[1], [1, -1, 1, -1, 5, 0, i32.min, 0, -1, 0])
    np.testing.assert_array_equal(got[2], [49, 49, 0, 0, 1, 0, 1, 0, 1, 0])  # x^-n = 0 but +-1
    np.testing.assert_array_equal(got[3][8:], [0, 0])         # shifts past the width
    np.testing.assert_array_equal(got[4][8:], [-1, 0])
    np.testing.assert_array_equal(got[6][5], i32.min)        # |INT_MIN| wraps
    np.testing.assert_array_equal(got[9][[8, 9]], [0, 32])
    np.testing.assert_array_equal(got[11][[1, 5]], [0, 0])   # saturating, negative -> 0


def test_float_corner_cases():
    x = np.array([-0.0, 0.0, np.nan, 2.5, -2.5, 0.5, -0.5, 1.5, np.inf, -np.inf], np.float32)
    y = np.array([0.0, -0.0, 1.0, np.nan, 1.0, -0.5, 0.5, 1.5, 1.0, 3.0], np.float32)

    @jit
    def f(a, b):
        return (lax.sign(a), lax.max(a, b), lax.min(a, b), lax.round(a),
                lax.round_nearest_even(a), lax.convert_element_type(a, PT.S32),
                lax.compare(a, b, "LT", total_order=True))

    sign, mx, mn, afz, even, conv, lt = [np.asarray(v) for v in f(x, y)]
    assert np.signbit(sign[0]) and not np.signbit(sign[1]) and np.isnan(sign[2])
    assert np.isnan(mx[2]) and np.isnan(mx[3]) and np.isnan(mn[2]) and np.isnan(mn[3])
    np.testing.assert_array_equal(afz[3:8], [3, -3, 1, -1, 2])
    assert np.signbit(afz[6])                                 # round(-0.5) = -1 (afz)
    np.testing.assert_array_equal(even[3:8], [2, -2, 0, -0.0, 2])
    np.testing.assert_array_equal(conv, [0, 0, 0, 2, -2, 0, 0, 1, 2**31 - 1, -2**31])
    np.testing.assert_array_equal(lt[:2], [True, False])      # -0 < +0 in the total order


# -- scalar expressions -------------------------------------------------------------------

def test_scalar_expressions_use_each_operand_once():
    """Operand texts may be buffer reads or other expressions: each appears once."""
    for prim, expr in scalar_exprs.items():
        if prim not in kew.raw_exprs:
            continue
        for t in ALL_TYPES:
            params = {"direction": "LT", "total_order": True, "new_dtype": PT.F32,
                      "rounding_method": lax.RoundingMethod.AWAY_FROM_ZERO,
                      "exponent_bits": 5, "mantissa_bits": 3}
            names = ["OPA", "OPB", "OPC"]
            try:
                text = expr(t, params, *names[:_arity(prim)])
            except (KeyError, NotImplementedError, ValueError, TypeError):
                continue
            for n in names[:_arity(prim)]:
                assert text.count(n) <= 1, f"{prim.name} {t}: {text}"


def _arity(prim) -> int:
    from numxla.primitives import elementwise as ew
    if prim in (ew.select_p, ew.clamp_p):
        return 3
    if prim.name in ew.BINARY_OPS or prim is ew.compare_p:
        return 2
    return 1


def test_scalar_expressions_inline_into_a_reducer():
    """Reducers are inlined from scalar_exprs: intermediate integers wrap and
    16-bit floats round after every op, as the reference computes them."""
    i8 = rng.integers(-128, 128, (6, 40), dtype=np.int8)
    f32 = rng.standard_normal((6, 40)).astype(np.float32)
    b16 = bf16_array(rng.standard_normal((6, 40)).astype(np.float32))

    def wrap_then_compare(a, b):
        s = lax.add(a, b)
        return lax.select(lax.gt(s, np.int8(0)), s, lax.sub(a, lax.div(b, np.int8(3))))

    def rounding_chain(a, b):
        return lax.add(lax.mul(a, a), lax.mul(lax.abs(b), bf16_array(np.float32(1.375))))

    def f(x, y, z):
        return (lax.reduce(x, np.int8(1), wrap_then_compare, (1,)),
                lax.reduce(y, np.float32(0), lambda a, b: lax.max(lax.tanh(a), lax.exp(b)), (1,)),
                lax.reduce(z, bf16_array(np.float32(0.5)), rounding_chain, (1,)))

    for got, want, t in zip(jit(f)(i8, f32, b16), f(i8, f32, b16), (PT.S8, PT.F32, PT.BF16)):
        assert_matches(got, want, t, t is not PT.F32, f"reduce {t.short_name}")
