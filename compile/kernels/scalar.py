"""Scalar helpers called from generated kernels, with XLA's semantics (as the
reference semantics in ``primitives/elementwise*.py`` define them) where
they differ from Python's, NumPy's or Numba's.

The helpers are plain ``@njit`` functions, not ``inline="always"``: LLVM
inlines the small ones into the calling loop (which still vectorises), and
Numba-level inlining costs about 0.1-0.5 s of compile time per call site
(its SSA pass grows faster than linearly with the function), for no speed.
They compile with ``error_model="numpy"`` (no ZeroDivisionError).

Helpers whose result type must be the operand's element type take NumPy
scalar classes (``np.int8``...) as arguments (Numba passes them as
compile-time types): Numba widens small integers to 64 bits in arithmetic,
so results are cast back explicitly, which also gives the wrapping XLA
defines.

16-bit floats are f32 values in kernels (exactly representable in their
format); ``round_to_f16`` / ``round_to_bf16`` round an f32 (or f64) to the
nearest value of the format, and ``*_bits`` convert such values to and
from their 16-bit words (bitcasts, ReducePrecision).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

from .vecmath import _fma

__all__ = [
    "one_like",
    "div_signed", "div_unsigned", "nan_max", "nan_min",
    "rem_signed", "rem_unsigned", "div_small", "rem_small", "pow_int", "complex_max", "complex_min",
    "shift_left", "shift_right_logical", "shift_right_arithmetic", "popcount", "clz",
    "bitcast", "round_afz", "sign_int", "sign_float", "sign_complex",
    "float_to_int", "total_order_key", "total_order_cmp_complex",
    "complex_mul", "complex_div", "complex_pow", "complex_expm1", "complex_log1p",
    "complex_logistic",
    "complex_rsqrt", "complex_cbrt", "complex_atan2", "complex_exp", "complex_log",
    "complex_sqrt", "complex_sin", "complex_cos", "complex_tan", "complex_tanh",
    "round_to_f16", "round_to_bf16",
    "f16_bits", "f16_from_bits", "bf16_bits", "bf16_from_bits", "c64_bits", "c64_from_bits",
    "reduce_precision_bits", "reduce_precision_f32", "reduce_precision_f64",
    "reduce_precision_f16", "reduce_precision_bf16",
]

_JIT = dict(cache=True, error_model="numpy")


def one_like(x):
    """1 in the (component) float type of ``x`` (for use in compiled code)."""


def float_limits(x):
    """(smallest normal, largest finite) of x's (component) float type."""


@overload(float_limits, inline="always")
def _float_limits(x):
    if isinstance(x, (types.Float, types.Complex)):
        bits = x.bitwidth // (2 if isinstance(x, types.Complex) else 1)
        info = np.finfo(np.float32 if bits == 32 else np.float64)
        lo, hi = info.dtype.type(info.tiny), info.dtype.type(info.max)
        return lambda x: (lo, hi)
    return None


@overload(one_like, inline="always")
def _one_like(x):
    if isinstance(x, (types.Float, types.Complex)):
        bits = x.bitwidth // (2 if isinstance(x, types.Complex) else 1)
        one = np.float32(1) if bits == 32 else np.float64(1)
        return lambda x: one
    return None


# --------------------------------------------------------------------------
# intrinsics: bit reinterpretation, bit counts
# --------------------------------------------------------------------------

@intrinsic
def bitcast(typingctx, value, to):
    """The bits of ``value`` read as the scalar type ``to`` (a NumPy scalar
    class) of the same width: ``bitcast(x, np.int32)`` for an f32 ``x``."""
    if not isinstance(to, types.NumberClass):
        return None
    target = to.instance_type
    if not (isinstance(value, (types.Integer, types.Float))
            and isinstance(target, (types.Integer, types.Float))
            and value.bitwidth == target.bitwidth):
        return None
    sig = target(value, to)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(target))
    return sig, codegen


@intrinsic
def _ctpop(typingctx, x):
    if not isinstance(x, types.Integer):
        return None
    sig = x(x)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])
    return sig, codegen


@intrinsic
def _ctlz(typingctx, x):
    if not isinstance(x, types.Integer):
        return None
    sig = x(x)

    def codegen(context, builder, signature, args):
        return builder.ctlz(args[0], ir.Constant(ir.IntType(1), 0))  # defined for 0
    return sig, codegen


@njit(**_JIT)
def popcount(x, T):
    """The number of set bits of ``x`` (of type ``T``)."""
    return T(_ctpop(T(x)))


@njit(**_JIT)
def clz(x, T):
    """The number of leading zero bits of ``x`` (of type ``T``); its width for 0."""
    return T(_ctlz(T(x)))


# --------------------------------------------------------------------------
# integer arithmetic
# --------------------------------------------------------------------------

@njit(**_JIT)
def div_signed(x, y):
    """Truncating division; x/0 = -1; INT_MIN/-1 = INT_MIN (wraps).  Cast the
    result to the element type."""
    if y == 0:
        return ~(x ^ x)
    if y == -1:
        return -x
    q = x // y  # floor division; adjust toward zero
    if q * y != x and (x < 0) != (y < 0):
        q += 1
    return q


@njit(**_JIT)
def div_unsigned(x, y):
    """x/0 has all bits set.  Cast the result to the element type."""
    if y == 0:
        return ~(x ^ x)
    return x // y


@njit(**_JIT)
def div_small(x, y, T):
    """div_signed/div_unsigned for types of at most 32 bits, through f64
    (exact: the f64 quotient cannot round across an integer), which vectorises."""
    d = np.float64(y) if y != 0 else np.float64(1)
    q = np.int64(np.trunc(np.float64(x) / d))
    return T(q) if y != 0 else T(-1)


@njit(**_JIT)
def rem_small(x, y, T):
    """rem_signed/rem_unsigned for types of at most 32 bits (see div_small)."""
    d = np.int64(y) if y != 0 else np.int64(1)
    q = np.int64(np.trunc(np.float64(x) / np.float64(d)))
    r = np.int64(x) - q * d
    return T(r) if y != 0 else T(x)


@njit(**_JIT)
def rem_signed(x, y, T):
    """C's fmod for integers: the dividend's sign; x % 0 = x; INT_MIN % -1 = 0."""
    if y == 0:
        return T(x)
    if y == -1:
        return T(0)
    r = x % y  # Python's modulo has the divisor's sign
    if r != 0 and (r < 0) != (x < 0):
        r -= y
    return T(r)


@njit(**_JIT)
def rem_unsigned(x, y, T):
    if y == 0:
        return T(x)
    return T(x % y)


@njit(**_JIT)
def pow_int(x, y, T):
    """x ** y by repeated squaring, wrapping; a negative exponent gives 0,
    except for the bases 1 (1) and -1 (+-1)."""
    if y < 0:
        if x == 1:
            return T(1)
        if x == -1:
            return T(-1) if y & 1 else T(1)
        return T(0)
    result = T(1)
    base = T(x)
    e = y
    while e != 0:
        if e & 1:
            result = T(result * base)
        base = T(base * base)
        e = e >> 1
    return result


@njit(**_JIT)
def shift_left(x, y, T, U, bits):
    """x << y; 0 when y (read as unsigned, type ``U``) is at least the width."""
    a = U(y)
    s = a if a < bits else U(0)
    v = T(U(x) << s)
    return v if a < bits else T(0)


@njit(**_JIT)
def shift_right_logical(x, y, T, U, bits):
    """x >> y shifting in zeros; 0 when y (as unsigned) is at least the width."""
    a = U(y)
    s = a if a < bits else U(0)
    v = T(U(x) >> s)
    return v if a < bits else T(0)


@njit(**_JIT)
def shift_right_arithmetic(x, y, T, S, U, bits):
    """x >> y shifting in sign bits (``S``: the signed type of the width);
    all sign bits when y (as unsigned) is at least the width."""
    a = U(y)
    s = a if a < bits else U(bits - 1)
    return T(S(x) >> s)


@njit(**_JIT)
def sign_int(x, T):
    if x > 0:
        return T(1)
    if x < 0:
        return T(-1)
    return T(0)


# --------------------------------------------------------------------------
# floating point
# --------------------------------------------------------------------------

@njit(**_JIT)
def nan_max(x, y):
    """XLA's max: NaN if either operand is NaN (NumPy's maximum: y on ties)."""
    if x != x or x > y:
        return x
    return y


@njit(**_JIT)
def nan_min(x, y):
    if x != x or x < y:
        return x
    return y


@njit(**_JIT)
def round_afz(x):
    """Round half away from zero (``x - trunc(x)`` is exact); keeps -0, inf, NaN."""
    t = np.trunc(x)
    return t + np.copysign(1.0, x) if abs(x - t) >= 0.5 else t


@njit(**_JIT)
def sign_float(x):
    """-1, -0, NaN, +0 or 1 (cast the result to the element type)."""
    return x if (x != x or x == 0) else np.copysign(1.0, x)


@njit(**_JIT)
def float_to_int(x, T, lo, hi, int_lo, int_hi):
    """XLA's float -> integer conversion: truncation toward zero, saturating
    at ``int_lo``/``int_hi`` (from the float bounds ``lo``/``hi``), NaN -> 0."""
    if x >= hi:
        return int_hi
    if x <= lo:
        return int_lo
    if x != x:
        return T(0)
    return T(x)


@intrinsic
def _width(typingctx, T):
    """The byte width of the scalar type ``T`` (a constant)."""
    if not isinstance(T, types.NumberClass):
        return None
    width = T.instance_type.bitwidth // 8
    sig = types.int64(T)

    def codegen(context, builder, signature, args):
        return context.get_constant(types.int64, width)
    return sig, codegen


@njit(**_JIT)
def total_order_key(x, I):
    """An integer (of the signed type ``I`` of x's width) ordered as XLA's
    total order of floats: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN."""
    b = bitcast(x, I)
    return b ^ I(~(I(1) << I(8 * _width(I) - 1))) if b < 0 else b


@njit(**_JIT)
def total_order_cmp_complex(a, b, I):
    """-1, 0 or 1: complex numbers compared lexicographically in the total order."""
    ka, kb = total_order_key(a.real, I), total_order_key(b.real, I)
    if ka != kb:
        return -1 if ka < kb else 1
    ka, kb = total_order_key(a.imag, I), total_order_key(b.imag, I)
    if ka != kb:
        return -1 if ka < kb else 1
    return 0


@njit(**_JIT)
def round_to_bf16(x):
    """The bf16 value nearest the f32 value ``x`` (ties to even; NaN quiet)."""
    b = np.int64(bitcast(np.float32(x), np.uint32))
    if x != x:
        w = (b >> 16) | 0x40
    else:
        w = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return bitcast(np.uint32((w & 0xFFFF) << 16), np.float32)


@njit(**_JIT)
def round_to_f16(x):
    """The f16 value nearest ``x`` (an f32 or f64), as an f32; ties to even,
    overflow to inf, gradual underflow."""
    v = np.float64(x)
    a = abs(v)
    if not a < np.inf:
        return np.float32(x)
    if a < 6.103515625e-05:       # below the smallest normal f16: quantum 2^-24
        r = np.rint(a * 16777216.0) * 5.960464477539063e-08
    else:
        b = bitcast(a, np.int64)
        b = (b + ((b >> 42) & 1) + ((1 << 41) - 1)) & ~((1 << 42) - 1)
        r = bitcast(b, np.float64)
    if r > 65504.0:
        r = np.inf
    return np.float32(np.copysign(r, v))


@njit(**_JIT)
def bf16_bits(x):
    """The bf16 word of ``x`` (an f32 holding a bf16 value)."""
    return np.uint16(bitcast(np.float32(x), np.uint32) >> 16)


@njit(**_JIT)
def bf16_from_bits(w):
    """The f32 value of the bf16 word ``w`` (exact)."""
    return bitcast(np.uint32(np.uint32(w) << 16), np.float32)


@njit(**_JIT)
def f16_bits(x):
    """The f16 word of ``x`` (an f32 holding an f16 value; NaN payloads kept)."""
    b = np.int64(bitcast(np.float32(x), np.uint32))
    sign = (b >> 16) & 0x8000
    e = (b >> 23) & 0xFF
    m = b & 0x7FFFFF
    if e == 0xFF:
        w = sign | (0x7C00 + (m >> 13) + (1 if (m != 0 and (m >> 13) == 0) else 0))
    elif e >= 113:            # normal f16
        w = sign | ((e - 112) << 10) | (m >> 13)
    elif e >= 103:            # subnormal f16: (1.m) 2^(e-127) = k 2^-24
        w = sign | (((m | 0x800000) >> (126 - e)) & 0x3FF)
    else:
        w = sign
    return np.uint16(w)


@njit(**_JIT)
def f16_from_bits(w):
    """The f32 value of the f16 word ``w`` (exact; NaN payloads kept)."""
    v = np.int64(w)
    sign = (v & 0x8000) << 16
    e = (v >> 10) & 0x1F
    m = v & 0x3FF
    if e == 0x1F:
        b = sign | 0x7F800000 | (m << 13)
    elif e != 0:
        b = sign | ((e + 112) << 23) | (m << 13)
    else:
        mag = np.float32(m) * np.float32(5.960464477539063e-08)   # exact
        b = sign | np.int64(bitcast(mag, np.uint32))
    return bitcast(np.uint32(b), np.float32)


@njit(**_JIT)
def c64_bits(z):
    """The 64 bits of a c64: the real part's in the low half (little-endian)."""
    re = np.uint64(bitcast(np.float32(z.real), np.uint32))
    im = np.uint64(bitcast(np.float32(z.imag), np.uint32))
    return np.uint64(re | (im << np.uint64(32)))


@njit(**_JIT)
def c64_from_bits(w):
    w = np.uint64(w)
    re = bitcast(np.uint32(w & np.uint64(0xFFFFFFFF)), np.float32)
    im = bitcast(np.uint32(w >> np.uint64(32)), np.float32)
    return np.complex64(complex(re, im))


@njit(**_JIT)
def reduce_precision_bits(bits, U, src_exponent, src_mantissa, exponent_bits, mantissa_bits):
    """XLA's ReducePrecision on the word ``bits`` (unsigned type ``U``) of a
    float with ``src_exponent``/``src_mantissa`` bits: round the mantissa to
    nearest even, then exponents out of range go to +-inf or +-0; NaN stays
    NaN (+inf with 0 mantissa bits)."""
    width = 8 * _width(U)
    sign_mask = U(U(1) << U(width - 1))
    exponent_mask = U(((U(1) << U(src_exponent)) - U(1)) << U(src_mantissa))
    x = U(bits)
    is_nan = U(x & ~sign_mask) > exponent_mask
    if mantissa_bits < src_mantissa:
        shift = src_mantissa - mantissa_bits
        last = U(U(1) << U(shift))
        bias = U(U((x & last) >> U(shift)) + U((last >> U(1)) - U(1)))
        x = U(U(x + bias) & ~U(last - U(1)))
    if exponent_bits < src_exponent:
        ebias = (1 << (src_exponent - 1)) - 1
        reduced = (1 << (exponent_bits - 1)) - 1
        exponent = U(x & exponent_mask)
        signed_zero = U(x & sign_mask)
        if exponent > U(U(ebias + reduced) << U(src_mantissa)):
            x = U(signed_zero | exponent_mask)
        elif exponent <= U(U(ebias - reduced) << U(src_mantissa)):
            x = signed_zero
    if is_nan:
        return U(bits) if mantissa_bits > 0 else exponent_mask
    return x


@njit(**_JIT)
def reduce_precision_f32(x, exponent_bits, mantissa_bits):
    b = reduce_precision_bits(bitcast(np.float32(x), np.uint32), np.uint32, 8, 23,
                              exponent_bits, mantissa_bits)
    return bitcast(b, np.float32)


@njit(**_JIT)
def reduce_precision_f64(x, exponent_bits, mantissa_bits):
    b = reduce_precision_bits(bitcast(np.float64(x), np.uint64), np.uint64, 11, 52,
                              exponent_bits, mantissa_bits)
    return bitcast(b, np.float64)


@njit(**_JIT)
def reduce_precision_f16(x, exponent_bits, mantissa_bits):
    """On an f32 holding an f16 value; the result is an f16 value as an f32."""
    # (the formats' widths as int64 values: constants would compile
    # reduce_precision_bits again for bf16's, on the same uint16 words)
    return f16_from_bits(reduce_precision_bits(f16_bits(x), np.uint16, np.int64(5),
                                               np.int64(10), exponent_bits, mantissa_bits))


@njit(**_JIT)
def reduce_precision_bf16(x, exponent_bits, mantissa_bits):
    return bf16_from_bits(reduce_precision_bits(bf16_bits(x), np.uint16, np.int64(8),
                                                np.int64(7), exponent_bits, mantissa_bits))


# --------------------------------------------------------------------------
# complex numbers: XLA's product; elsewhere as NumPy computes them, with
# XLA's special values where the reference semantics adopt them
# --------------------------------------------------------------------------

@njit(**_JIT)
def complex_mul(u, v):
    """XLA:CPU's complex product: the textbook formula with the multiply-adds
    LLVM contracts, ``re = fma(a, c, -(b d))``, ``im = fma(b, c, a d)``, so
    an overflowing part is what XLA gives (``(M + Mi)(100 + 3i) = -inf + inf i``
    for the largest finite M, where the plain formula gives NaN)."""
    a, b, c, d = u.real, u.imag, v.real, v.imag
    return complex(_fma(a, c, -(b * d)), _fma(b, c, a * d))


@njit(**_JIT)
def complex_max(x, y):
    """NumPy's maximum of complex numbers: lexicographic, NaN propagating."""
    xr, xi, yr, yi = x.real, x.imag, y.real, y.imag
    ge = (xr > yr and not (xi != xi) and not (yi != yi)) or (xr == yr and xi >= yi)
    return x if (xr != xr or xi != xi or ge) else y


@njit(**_JIT)
def complex_min(x, y):
    xr, xi, yr, yi = x.real, x.imag, y.real, y.imag
    le = (xr < yr and not (xi != xi) and not (yi != yi)) or (xr == yr and xi <= yi)
    return x if (xr != xr or xi != xi or le) else y


@njit(**_JIT)
def complex_div(a, b):
    """NumPy's complex division (Smith's algorithm; x / 0 is inf or NaN,
    where Numba's raises ZeroDivisionError)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    one = one_like(br)
    abr, abi = abs(br), abs(bi)
    if abr >= abi:
        if abr == 0 and abi == 0:
            return complex(ar / abr, ai / abr)
        rat = bi / br
        scl = one / (br + bi * rat)
        return complex((ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = one / (bi + br * rat)
    return complex((ar * rat + ai) * scl, (ai * rat - ar) * scl)


@njit(**_JIT)
def _cmul(a, b):
    return complex(a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)


@njit(**_JIT)
def _inf_to_unit(v, one):
    return np.copysign(one if abs(v) == np.inf else one - one, v)


@njit(**_JIT)
def _cmul_c99(u, v):
    """C99's complex product (Annex G: an infinite factor gives an infinite
    product, not NaN), as C's ``__muldc3``."""
    a, b, c, d = u.real, u.imag, v.real, v.imag
    one = one_like(a)
    ac, bd, ad, bc = a * c, b * d, a * d, b * c
    x, y = ac - bd, ad + bc
    if x != x and y != y:
        recalc = False
        if abs(a) == np.inf or abs(b) == np.inf:
            a, b = _inf_to_unit(a, one), _inf_to_unit(b, one)
            c = np.copysign(one - one, c) if c != c else c
            d = np.copysign(one - one, d) if d != d else d
            recalc = True
        if abs(c) == np.inf or abs(d) == np.inf:
            c, d = _inf_to_unit(c, one), _inf_to_unit(d, one)
            a = np.copysign(one - one, a) if a != a else a
            b = np.copysign(one - one, b) if b != b else b
            recalc = True
        if not recalc and (abs(ac) == np.inf or abs(bd) == np.inf or abs(ad) == np.inf
                           or abs(bc) == np.inf):
            a = np.copysign(one - one, a) if a != a else a
            b = np.copysign(one - one, b) if b != b else b
            c = np.copysign(one - one, c) if c != c else c
            d = np.copysign(one - one, d) if d != d else d
            recalc = True
        if recalc:
            inf = one / (one - one)
            x = inf * (a * c - b * d)
            y = inf * (a * d + b * c)
    return complex(x, y)


@njit(**_JIT)
def complex_pow(a, b):
    """NumPy's complex power: exact products for small integer exponents."""
    br, bi = b.real, b.imag
    one = one_like(br)
    zero = one - one
    if br == 0 and bi == 0:
        return complex(one, zero)
    if a.real == 0 and a.imag == 0:
        if br > 0:
            return complex(zero, zero)
        nan = zero / zero
        return complex(nan, nan)
    if bi == 0 and abs(br) < 100 and br == np.trunc(br):
        n = np.int64(br)
        if n == 1:
            return a
        if n == 2:
            return _cmul(a, a)
        if n == 3:
            return _cmul(a, _cmul(a, a))
        mask = 1
        m = n if n > 0 else -n
        aa = complex(one, zero)
        p = a
        while True:
            if m & mask:
                aa = _cmul(aa, p)
            mask <<= 1
            if m < mask or mask <= 0:
                break
            p = _cmul(p, p)
        if n < 0:
            return complex_div(complex(one, zero), aa)
        return aa
    return complex_exp(_cmul_c99(b, complex_log(a)))


@njit(**_JIT)
def _finite(v):
    return abs(v) < np.inf


@njit(**_JIT)
def complex_exp(z):
    """C99's cexp as glibc computes it (NumPy calls it), special values
    included: where e^x overflows (or underflows) e^|x| is taken in steps of
    e^t, t = floor(ln max), multiplied into cos y and sin y first, so a part
    whose value is finite stays finite (exp(710 + 1e-300i) = inf + 2.2e8i, as
    XLA gives too)."""
    x, y = z.real, z.imag
    if y == 0:
        return complex(np.exp(x), y)
    if not _finite(y) and abs(x) == np.inf:
        e = np.exp(x)
        return complex(x, y - y) if x > 0 else complex(e, e)
    c, s = np.cos(y), np.sin(y)
    t = np.floor(np.log(float_limits(x)[1]))
    ax = abs(x)
    if _finite(x) and ax > t:
        step = np.exp(t) if x > 0 else one_like(x) / np.exp(t)
        ax -= t
        c, s = c * step, s * step
        if ax > t:
            ax -= t
            c, s = c * step, s * step
        e = np.exp(ax if x > 0 else -ax)
    else:
        e = np.exp(x)
    return complex(e * c, e * s)


@njit(**_JIT)
def _log_abs(x, y):
    """log|x + iy| for finite, not both zero x and y (NumPy's ``npy_clog``):
    scaled where |z| would overflow or lose bits to underflow, through
    log1p where |z| is near 1."""
    one = one_like(x)
    tiny, huge = float_limits(x)
    ax, ay = abs(x), abs(y)
    big, small = max(ax, ay), min(ax, ay)
    if big > huge / (one + one + one + one):
        half = one / (one + one)
        return np.log(np.hypot(x * half, y * half)) + np.log(one + one)
    if big < tiny:
        up = one_like(x) * 2.0 ** 60
        return np.log(np.hypot(x * up, y * up)) - np.log(up)
    h = np.hypot(x, y)
    if h < one_like(x) * 0.71 or h > one_like(x) * 1.73:
        return np.log(h)
    return np.log1p((big - one) * (big + one) + small * small) / (one + one)


@njit(**_JIT)
def complex_log(z):
    """log|z| + i arg z; |z| never overflows (XLA's and NumPy's log(-M - Mi) is
    710.13 - 2.36i)."""
    x, y = z.real, z.imag
    if _finite(x) and _finite(y) and (x != 0 or y != 0):
        return complex(_log_abs(x, y), np.arctan2(y, x))
    return complex(np.log(np.hypot(x, y)), np.arctan2(y, x))


@njit(**_JIT)
def complex_sqrt(z):
    """C's csqrt as glibc computes it (NumPy calls it): on the usual range its
    formulas (``2 Re Im = Im z`` against cancellation), elsewhere Numba's."""
    x, y = z.real, z.imag
    one = one_like(x)
    half = one / (one + one)
    ax, ay = abs(x), abs(y)
    if not (np.isfinite(x) and np.isfinite(y)) or (ax == 0 and ay == 0):
        return np.sqrt(z)   # zeros, inf, NaN (cmath.sqrt would widen c64)
    tiny = float_limits(x)[0] * (one + one)
    huge = float_limits(x)[1] / (one + one + one + one)
    # extreme scales: sqrt(4^k z) = 2^k sqrt(z), both exact
    back = one
    m = max(ax, ay)
    if m > huge:
        x, y, back = x * (half * half), y * (half * half), one + one
    elif m < tiny:
        up = one_like(x) * 2.0 ** 30
        x, y, back = x * up * up, y * up * up, one / up
    d = np.hypot(x, y)
    if x > 0:
        r = np.sqrt(half * (d + x))
        s = half * (y / r)
    else:
        s = np.sqrt(half * (d - x))
        r = abs(half * (y / s))
    return complex(r * back, np.copysign(s * back, y))


@njit(**_JIT)
def _csinh(x, y):
    if y == 0:
        return complex(np.sinh(x), y)
    if not _finite(y):
        if x == 0 or abs(x) == np.inf:
            return complex(x, y - y)
    return complex(np.sinh(x) * np.cos(y), np.cosh(x) * np.sin(y))


@njit(**_JIT)
def _ccosh(x, y):
    if y == 0:
        return complex(np.cosh(x), y * np.copysign(one_like(x), x))
    if not _finite(y):
        if x == 0:
            return complex(y - y, x * (one_like(x) - one_like(x)))
        if abs(x) == np.inf:
            return complex(abs(x), y - y)
    return complex(np.cosh(x) * np.cos(y), np.sinh(x) * np.sin(y))


@njit(**_JIT)
def _ctanh(x, y, big):
    """Kahan's algorithm (FreeBSD's and glibc's ctanh), C99's special values;
    ``big``: where tanh(|x|) rounds to 1 in the precision of x."""
    one = one_like(x)
    if x != x:
        return complex(x, y if y == 0 else x)
    if abs(x) == np.inf:
        im = np.sin((one + one) * y) if _finite(y) else y
        return complex(np.copysign(one, x), np.copysign(one - one, im))
    if not _finite(y):
        return complex(x if x == 0 else y - y, y - y)
    if abs(x) >= big:
        two = one + one
        e = np.exp(-two * abs(x))
        return complex(np.copysign(one, x), two * two * np.sin(y) * np.cos(y) * e)
    t = np.tan(y)
    beta = one + t * t
    s = np.sinh(x)
    rho = np.sqrt(one + s * s)
    den = one + beta * s * s
    return complex(beta * rho * s / den, t / den)


@njit(**_JIT)
def _nan_pair(z):
    nan = (one_like(z) - one_like(z)) / (one_like(z) - one_like(z))
    return complex(nan, nan)


@njit(**_JIT)
def complex_sin(z):
    """sin z = -i sinh(iz); NaN + NaN i where Re z is infinite or NaN, as XLA
    (its sin(Re z) factor is NaN; C99 leaves signs open there)."""
    if not _finite(z.real):
        return _nan_pair(z)
    w = _csinh(-z.imag, z.real)
    return complex(w.imag, -w.real)


@njit(**_JIT)
def complex_cos(z):
    """cos z = cosh(iz); NaN + NaN i where Re z is infinite or NaN, as XLA."""
    if not _finite(z.real):
        return _nan_pair(z)
    return _ccosh(-z.imag, z.real)


@njit(**_JIT)
def complex_tan(z, big):
    """tan z = -i tanh(iz)."""
    w = _ctanh(-z.imag, z.real, big)
    return complex(w.imag, -w.real)


@njit(**_JIT)
def complex_tanh(z, big):
    return _ctanh(z.real, z.imag, big)


@njit(**_JIT)
def complex_expm1(z):
    """NumPy's: (expm1(x) cos y - 2 sin^2(y/2)) + i e^x sin y."""
    x, y = z.real, z.imag
    two = one_like(x) + one_like(x)
    a = np.sin(y / two)
    return complex(np.expm1(x) * np.cos(y) - two * a * a, np.exp(x) * np.sin(y))


@njit(**_JIT)
def complex_log1p(z):
    """NumPy's: log|1 + z| + i arg(1 + z)."""
    x, y = z.real, z.imag
    x1 = x + one_like(x)
    return complex(np.log(np.hypot(x1, y)), np.arctan2(y, x1))


@njit(**_JIT)
def complex_logistic(z):
    """1 / (1 + e^-z)."""
    one = complex(one_like(z), one_like(z) - one_like(z))
    return complex_div(one, one + complex_exp(-z))


@njit(**_JIT)
def complex_rsqrt(z):
    one = complex(one_like(z), one_like(z) - one_like(z))
    return complex_div(one, complex_sqrt(z))


@njit(**_JIT)
def complex_cbrt(z):
    """The principal cube root |z|^(1/3) cis(arg z / 3), as the reference
    semantics define it; 0 stays 0; |z| / 8 where |z| would overflow."""
    x, y = z.real, z.imag
    if x == 0 and y == 0:
        return z
    one = one_like(x)
    if max(abs(x), abs(y)) > float_limits(x)[1] / (one + one):
        r = (one + one) * np.cbrt(np.hypot(x * (one / 8), y * (one / 8)))
    else:
        r = np.cbrt(np.hypot(x, y))
    angle = np.arctan2(y, x) / (one + one + one)
    sin = np.sin(angle)
    return complex(r * np.cos(angle), sin if sin == 0 else r * sin)


@njit(**_JIT)
def complex_atan2(y, x):
    """StableHLO's atan2 for complex operands: -i log((x + iy) / sqrt(x^2 + y^2))."""
    zero = one_like(x) - one_like(x)
    i = complex(zero, one_like(x))
    w = complex_div(x + _cmul(i, y), np.sqrt(_cmul(x, x) + _cmul(y, y)))
    return _cmul(complex(zero, -one_like(x)), complex_log(w))


@njit(**_JIT)
def sign_complex(z):
    """z / |z| (0 for 0; NaN + NaN i if either part is NaN), as NumPy divides."""
    m = abs(z)
    if z.real != z.real or z.imag != z.imag:
        nan = (one_like(z) - one_like(z)) / (one_like(z) - one_like(z))
        return complex(nan, nan)
    one = one_like(z)
    d = m if m != 0 else one
    scl = one / d
    zero = one - one
    return complex((z.real + z.imag * zero) * scl, (z.imag - z.real * zero) * scl)
