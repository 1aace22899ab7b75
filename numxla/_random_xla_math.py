"""``log``, ``log1p`` and ``erf_inv`` computed as XLA:CPU computes them, so that
the samplers built on them (``normal``, ``gumbel``, ``categorical``,
``exponential``...) give JAX's values to the last bit or nearly.

XLA:CPU does not call libm. Its f32 ``log`` is Eigen's ``plog`` (exponent split
off with bit operations, a Cephes polynomial on the mantissa) and its f32
``log1p`` a rational approximation for ``|x| < sqrt(2) - 1``, ``plog(1 + x)``
elsewhere (read from the LLVM IR jaxlib 0.10.2 emits). Both differ from the
correctly rounded ``primitives.log``/``log1p`` by an ulp in ~25% of inputs,
which ``erf_inv`` magnifies. ``erf_inv`` is not an XLA op: JAX expands it into
Giles' polynomials ("Approximating the erfinv function", 2010), f32's or f64's,
evaluated here in the same order.

XLA:CPU also lets LLVM contract a multiply whose only use is an add into an
FMA instruction, rounded once. numxla has no FMA op: :func:`fma` emulates one
exactly with ~40 f32 ops. Used where it is cheap (``uniform``'s one
multiply-add per draw, ``erf`` on the bounds of ``truncated_normal``), it makes
those bit-identical. In the polynomials of ``log``/``log1p``/``erf_inv`` (~30
FMAs per normal draw) it is off by default (:data:`EXACT_FMA`): there, the
numxla compiler's kernels grow ~10x (4000 generated lines, 2 minutes of Numba
compile for one ``jit(normal)``, 5 s for 10^6 draws, eager calls 0.2 s), so a
multiply and an add round twice instead. Measured against jaxlib 0.10.2 on
x86-64 over 2**20 draws: with ``EXACT_FMA`` off, ``normal`` differs in 4.2%
of values by at most 3 ulps, ``log``/``log1p`` by 1 ulp in 0.1-1% of inputs,
``exponential``/``laplace``/``logistic`` in 1-1.6% by at most 2 ulps (8 for
logistic near 0), ``gumbel`` in 0.2% (values near 0); with it on, all are
bit-identical (2**20 of each). ``erf`` is bit-identical either way. XLA also
flushes subnormals to zero, which is not reproduced. f64 uses
``primitives.log1p`` inside Giles' f64 polynomial and plain multiply-adds
(within an ulp or two of JAX with x64); f16/bf16 compute in f32.

Everything is numxla ops (so it traces, batches and differentiates). Splitting
``y`` into exponent and mantissa is written as ``y * 2**-exponent`` with the
power of two built from the bits: exact, and it carries ``y``'s tangent. The
polynomials are ``fori_loop``s over coefficient tables, which keeps compiled
kernels small (Numba's compile time grows fast with kernel size).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
from numxla.tracer.core import abstractify

__all__ = ["xla_log", "xla_log1p", "xla_erf", "erf_inv", "mul_add", "fma"]

_F32 = np.float32
_U32 = np.uint32

#: Emulate XLA:CPU's FMAs exactly inside the log/log1p/erf_inv polynomials too
#: (bit-identical normals at ~10x the cost; see the module docstring). Read
#: when a function is traced: set it before the first call of a jitted one.
EXACT_FMA = False


def _hexf(bits: int) -> np.float32:
    return np.array(bits, _U32).view(_F32)[()]


def _const(x: Any, value: Any) -> Any:
    """``value`` broadcast to ``x``'s shape, in ``x``'s element type."""
    aval = abstractify(x)
    return lax.broadcast_in_dim(aval.dtype.type(value), aval.dimensions, ())


def _u32_like(x: Any, value: int) -> Any:
    return lax.broadcast_in_dim(_U32(value), abstractify(x).dimensions, ())


def _materialize(*values: Any) -> Any:
    """The values, computed into buffers of their own before their uses
    (``optimization_barrier``): the compiler fuses element-wise ops by
    substituting expressions into their uses, so a value used ``n`` times
    would be recomputed ``n`` times in the kernel's code. Placed after the
    steps whose results feed many others, it keeps the kernels short."""
    out = lax.optimization_barrier(values)
    return out if len(values) > 1 else out[0]


def mul_add(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` where XLA fuses it but the product is exact (a power of
    two, or ``c``'s scale): rounding once or twice gives the same value."""
    return lax.add(lax.mul(a, b), c)


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """``s + e == a + b`` exactly, ``s`` the rounded sum (Knuth)."""
    s = _materialize(lax.add(a, b))
    bb = lax.sub(s, a)
    return s, _materialize(lax.add(lax.sub(a, lax.sub(s, bb)), lax.sub(b, bb)))


def _split(a: Any) -> tuple[Any, Any]:
    """``a == hi + lo``, ``hi`` the upper 12 bits of the significand."""
    hi = lax.bitcast_convert_type(
        lax.bitwise_and(lax.bitcast_convert_type(a, _U32), _u32_like(a, 0xFFFFF000)), _F32)
    return hi, lax.sub(a, hi)


def _two_product(a: Any, b: Any) -> tuple[Any, Any]:
    """``p + e == a * b`` exactly, ``p`` the rounded product (Dekker)."""
    p = _materialize(lax.mul(a, b))
    ah, al, bh, bl = _materialize(*_split(a), *_split(b))
    e = lax.add(lax.sub(lax.mul(ah, bh), p), lax.mul(ah, bl))
    return p, _materialize(lax.add(lax.add(e, lax.mul(al, bh)), lax.mul(al, bl)))


def _add_round_to_odd(a: Any, b: Any) -> Any:
    """``a + b`` rounded to odd: toward zero, last bit set when inexact."""
    s, e = _two_sum(a, b)
    bits = _materialize(lax.bitcast_convert_type(s, _U32))
    fix = lax.bitwise_and(lax.eq(lax.bitwise_and(bits, _u32_like(s, 1)), _u32_like(s, 0)),
                          lax.ne(e, _const(s, 0)))
    away = lax.eq(lax.lt(s, _const(s, 0)), lax.lt(e, _const(s, 0)))   # e makes |a + b| > |s|
    step = lax.select(away, lax.add(bits, _u32_like(s, 1)), lax.sub(bits, _u32_like(s, 1)))
    return lax.bitcast_convert_type(lax.select(fix, step, bits), _F32)


def fma(a: Any, b: Any, c: Any) -> Any:
    """``a * b + c`` rounded once, exactly as an FMA instruction (f32; other
    types: :func:`mul_add`): error-free transformations and rounding to odd
    (Boldo and Melquiond, "Emulation of FMA and correctly rounded sums: proved
    algorithms using rounding to odd", 2008), ~35 ops. Exact unless ``a * b``
    overflows or its low part underflows."""
    if abstractify(a).dtype != np.float32:
        return mul_add(a, b, c)
    a, b, c = _materialize(a, b, c)
    uh, ul = _two_product(a, b)
    th, tl = _two_sum(c, uh)
    return _materialize(lax.add(th, _add_round_to_odd(tl, ul)))


def _poly_fma(a: Any, b: Any, c: Any) -> Any:
    """A multiply-add XLA:CPU fuses inside a polynomial: :func:`fma` with
    :data:`EXACT_FMA`, else :func:`mul_add` (rounded twice)."""
    return (fma if EXACT_FMA else mul_add)(a, b, c)


def _horner(tables: Sequence[Sequence[float]], x: Any, branch: Any = None,
            step: Any = _poly_fma) -> Any:
    """``(((c0 * x + c1) * x + c2) ...)``, XLA's order, as a ``fori_loop`` over
    the coefficients, ``step(p, x, c)`` each. With several ``tables`` (padded
    at the front with zeros, which leave the value alone), element ``i`` uses
    table ``branch[i]``."""
    dtype = abstractify(x).dtype
    size = max(len(t) for t in tables)
    table = np.array([[0.0] * (size - len(t)) + list(t) for t in tables], dtype)

    def coefficient(i: Any) -> Any:
        column = lax.dynamic_slice(table, (np.int32(0), i), (len(tables), 1))
        picks = [lax.broadcast_in_dim(lax.reshape(lax.slice(column, (j, 0), (j + 1, 1)), ()),
                                      abstractify(x).dimensions, ()) for j in range(len(tables))]
        c = picks[-1]
        for j in reversed(range(len(tables) - 1)):
            c = lax.select(lax.eq(branch, np.int32(j)), picks[j], c)
        return c

    if size <= 3 and len(tables) == 1:   # short: unrolled (less code than a loop)
        p = _const(x, table[0, 0])
        for c in table[0, 1:]:
            p = step(p, x, _const(x, c))
        return p
    return lax.fori_loop(1, size, lambda i, p: step(p, x, coefficient(i)), coefficient(0))


# Eigen's plog for float: the polynomial in three interleaved parts, and ln(2)
# split in two (Cody-Waite).
_PLOG_PARTS = ((0x3D9021BB, 0xBDEBD1B8, 0x3DEF251A),
               (0xBDFE5D4F, 0x3E11E9BF, 0xBE2AAE50),
               (0x3E4CCEAC, 0xBE7FFFFC, 0x3EAAAAAA))
_LN2_LO, _LN2_HI = _hexf(0xB95E8083), _hexf(0x3F318000)
_SQRT_HALF = _hexf(0x3F3504F3)
_MIN_NORMAL = np.finfo(_F32).tiny


def _plog_f32(y: Any) -> Any:
    """Eigen's ``plog`` of an f32 array, special values included (NaN below 0,
    -inf at 0, +inf at +inf)."""
    clamped = _materialize(lax.select(lax.gt(y, _const(y, _MIN_NORMAL)), y,
                                      _const(y, _MIN_NORMAL)))
    biased = lax.shift_right_logical(lax.bitcast_convert_type(clamped, _U32), _u32_like(y, 23))
    exponent = lax.sub(lax.convert_element_type(biased, _F32), _const(y, 126))
    mantissa = _materialize(_mantissa(clamped, biased))        # in [0.5, 1)
    small = lax.lt(mantissa, _const(y, _SQRT_HALF))
    exponent = lax.sub(exponent, lax.select(small, _const(y, 1), _const(y, 0)))
    x = lax.add(lax.sub(mantissa, _const(y, 1)), lax.select(small, mantissa, _const(y, 0)))
    x, exponent = _materialize(x, exponent)
    x2 = lax.mul(x, x)
    x3 = lax.mul(x2, x)
    x3 = _materialize(x3)
    p1, p2, p3 = (_horner([[_hexf(c) for c in part]], x) for part in _PLOG_PARTS)
    poly = _poly_fma(_poly_fma(p1, x3, p2), x3, p3)
    poly = _poly_fma(poly, x3, lax.mul(exponent, _const(y, _LN2_LO)))
    # products by 1/2 and by the 9-bit ln(2) high part are exact
    result = lax.add(mul_add(x2, _const(y, -0.5), x), poly)
    result = mul_add(exponent, _const(y, _LN2_HI), result)
    return _special_values(y, result)


def _mantissa(y: Any, biased: Any) -> Any:
    """``y``'s mantissa in [0.5, 1): ``y * 2**(126 - biased exponent)``, exact,
    with ``y``'s derivative; the bit pattern itself where that power of two is
    not a normal float (``y >= 2**126``)."""
    field = lax.sub(_u32_like(y, 253), lax.min(biased, _u32_like(y, 252)))
    scale = lax.bitcast_convert_type(lax.shift_left(field, _u32_like(y, 23)), _F32)
    bits = lax.bitcast_convert_type(y, _U32)
    exact = lax.bitcast_convert_type(
        lax.bitwise_or(lax.bitwise_and(bits, _u32_like(y, 0x807FFFFF)), _u32_like(y, 0x3F000000)),
        _F32)
    return lax.select(lax.le(biased, _u32_like(y, 252)), lax.mul(y, scale), exact)


def _special_values(y: Any, result: Any) -> Any:
    nan, inf = _const(y, np.nan), _const(y, np.inf)
    result = lax.select(lax.gt(y, _const(y, 0)), result, nan)       # also NaN for NaN
    result = lax.select(lax.eq(y, _const(y, 0)), lax.neg(inf), result)
    return lax.select(lax.eq(y, inf), inf, result)


# log1p for |x| < sqrt(2) - 1: x - x^2/2 + x^3 * P(x)/Q(x).
_LOG1P_P = (_F32(4.527e-05), _hexf(0x3EFF40C5), _hexf(0x40D284FA), _hexf(0x41EF4B9C),
            _hexf(0x4273CC76), _hexf(0x426473AD), _hexf(0x41A05101))
_LOG1P_Q = (_F32(1), _hexf(0x417101AD), _hexf(0x42A6185B), _hexf(0x435DC32D),
            _hexf(0x439A8CA3), _hexf(0x43586D8A), _hexf(0x42707982))
_LOG1P_SMALL = _hexf(0x3ED413CD)


def _is_f32(x: Any) -> bool:
    return abstractify(x).dtype == np.float32


def xla_log(x: Any) -> Any:
    """Natural log as XLA:CPU computes it for f32 (``lax.log`` otherwise)."""
    return _plog_f32(x) if _is_f32(x) else lax.log(x)


def xla_log1p(x: Any) -> Any:
    """``log(1 + x)`` as XLA:CPU computes it for f32 (``lax.log1p`` otherwise)."""
    if not _is_f32(x):
        return lax.log1p(x)
    x = _materialize(x)
    x2 = lax.mul(x, x)
    ratio = lax.div(_horner([_LOG1P_P], x), _horner([_LOG1P_Q], x))
    small = lax.add(x, lax.add(lax.mul(x2, _const(x, -0.5)), lax.mul(lax.mul(x, x2), ratio)))
    large = _plog_f32(lax.add(x, _const(x, 1)))
    return lax.select(lax.lt(lax.abs(x), _const(x, _LOG1P_SMALL)), small, large)


# XLA's f32 erf: x * P(x^2) / Q(x^2) below 3.832 (+-1 beyond), with explicit FMAs.
_ERF_P = tuple(_hexf(c) for c in (0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA))
_ERF_Q = tuple(_hexf(c) for c in (0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21,
                                  0x3EFEB44A, 0x3F800000))
_ERF_ONE = _hexf(0x407547CB)


def xla_erf(x: Any) -> Any:
    """The error function as XLA computes it for f32 (a rational fit whose
    Horner steps are FMA ops, emulated exactly); ``lax.erf`` otherwise."""
    if not _is_f32(x):
        return lax.erf(x)
    x2 = _materialize(lax.mul(x, x))
    ratio = lax.div(lax.mul(x, _horner([_ERF_P], x2, step=fma)), _horner([_ERF_Q], x2, step=fma))
    sign = lax.select(lax.lt(x, _const(x, 0)), _const(x, -1), _const(x, 1))
    return lax.select(lax.ge(lax.abs(x), _const(x, _ERF_ONE)), sign, ratio)


# Giles' erf_inv: w = -log(1 - x^2); erf_inv(x) = x * P(w - shift) (central
# range) or x * P(sqrt(w) - shift) (tails). Rows: (w below, shift, sqrt?, P).
_ERF_INV_F32 = (
    (5.0, 2.5, False, (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                       0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)),
    (np.inf, 3.0, True, (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                         0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)),
)
_ERF_INV_F64 = (
    (6.25, 3.125, False, (
        -3.64441206401782e-21, -1.6850591381820166e-19, 1.28584807152564e-18,
        1.1157877678025181e-17, -1.333171662854621e-16, 2.0972767875968562e-17,
        6.637638134358324e-15, -4.054566272975207e-14, -8.151934197605472e-14,
        2.6335093153082323e-12, -1.2975133253453532e-11, -5.415412054294628e-11,
        1.0512122733215323e-09, -4.112633980346984e-09, -2.9070369957882005e-08,
        4.2347877827932404e-07, -1.3654692000834679e-06, -1.3882523362786469e-05,
        0.00018673420803405714, -0.000740702534166267, -0.006033670871430149,
        0.24015818242558962, 1.6536545626831027)),
    (16.0, 3.25, True, (
        2.2137376921775787e-09, 9.075656193888539e-08, -2.7517406297064545e-07,
        1.8239629214389228e-08, 1.5027403968909828e-06, -4.013867526981546e-06,
        2.9234449089955446e-06, 1.2475304481671779e-05, -4.7318229009055734e-05,
        6.828485145957318e-05, 2.4031110387097894e-05, -0.0003550375203628475,
        0.0009532893797373805, -0.0016882755560235047, 0.002491442096107851,
        -0.003751208507569241, 0.005370914553590064, 1.0052589676941592,
        3.0838856104922208)),
    (np.inf, 5.0, True, (
        -2.7109920616438573e-11, -2.555641816996525e-10, 1.5076572693500548e-09,
        -3.789465440126737e-09, 7.61570120807834e-09, -1.496002662714924e-08,
        2.914795345090108e-08, -6.771199775845234e-08, 2.2900482228026655e-07,
        -9.9298272942317e-07, 4.526062597223154e-06, -1.968177810553167e-05,
        7.599527703001776e-05, -0.00021503011930044477, -0.00013871931833623122,
        1.0103004648645344, 4.849906401408584)),
)


def erf_inv(x: Any) -> Any:
    """The inverse error function on (-1, 1) (+-inf at +-1), as JAX's
    ``lax.erf_inv`` computes it on CPU: the branch's coefficients picked per
    element, then one Horner evaluation."""
    dtype = abstractify(x).dtype
    if dtype not in (np.float32, np.float64):
        return lax.convert_element_type(erf_inv(lax.convert_element_type(x, _F32)), dtype)
    rows = _ERF_INV_F32 if dtype == np.float32 else _ERF_INV_F64
    x = _materialize(x)
    w = _materialize(lax.neg(xla_log1p(lax.mul(x, lax.neg(x)))))
    branch = lax.broadcast_in_dim(np.int32(len(rows) - 1), abstractify(x).dimensions, ())
    arg = None
    for j in range(len(rows) - 1, -1, -1):
        below, shift, use_sqrt, _ = rows[j]
        # (sqrt of at least tiny: where w == 0 this branch is not taken, but an
        # infinite derivative there would make the gradient NaN)
        root = lax.sqrt(lax.max(w, _const(x, np.finfo(dtype).tiny)))
        value = lax.add(root if use_sqrt else w, _const(x, -shift))
        if arg is None:
            arg = value
            continue
        inside = lax.lt(w, _const(x, below))
        arg = lax.select(inside, value, arg)
        branch = lax.select(inside, _const(branch, j), branch)
    arg, branch = _materialize(arg, branch)
    result = lax.mul(_horner([row[3] for row in rows], arg, branch), x)
    signed_inf = lax.select(lax.lt(x, _const(x, 0)), _const(x, -np.inf), _const(x, np.inf))
    return lax.select(lax.eq(lax.abs(x), _const(x, 1)), signed_inf, result)
