"""Transcendental functions that LLVM can vectorise.

PyPI's llvmlite has no SVML, so ``math.exp`` in a Numba loop is a scalar
libm call.  These versions are written in plain arithmetic (range reduction
plus a polynomial), with bit casts through tiny intrinsics, so that a loop
calling them vectorises.  Special values follow NumPy: NaN propagates,
``exp(inf) = inf``, ``exp(-inf) = 0``, results that underflow are denormal
(no flush to zero), ``log(0) = -inf``, ``log(x < 0) = nan``.

``exp_f32`` works in f32 arithmetic (16 lanes on AVX-512); ``log_f32``
computes in f64 and rounds once; the f64 functions use Cody–Waite
reduction with two-part constants.  All are within 1 ulp of NumPy.
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["exp_f64", "exp_f32", "log_f64", "log_f32"]


@intrinsic
def _bits_to_f64(typingctx, bits):
    """Reinterpret an int64 as a float64 (a register move, vectorisable)."""
    sig = types.float64(types.int64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return sig, codegen


@intrinsic
def _f64_to_bits(typingctx, value):
    sig = types.int64(types.float64)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return sig, codegen


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10


@njit(inline="always", cache=True)
def _pow2(k):
    """2.0 ** k for an integer k in [-1022, 1023]."""
    return _bits_to_f64((k + 1023) << 52)


@njit(inline="always", cache=True)
def exp_f64(x):
    # clamp (NaN compares false and is restored at the end)
    xc = x if x < 709.8 else 709.8
    xc = xc if xc > -745.2 else -745.2
    kf = math.floor(xc * _LOG2E + 0.5)
    k = int(kf)
    r = (xc - kf * _LN2_HI) - kf * _LN2_LO
    # exp(r) on |r| <= 0.347: Taylor to degree 13 (truncation < 5e-18 relative)
    p = 1.0 / 6227020800.0
    p = p * r + 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    # scale by 2**k in two steps so that denormal and overflowing results come out right
    k1 = k >> 1
    y = p * _pow2(k1) * _pow2(k - k1)
    y = y if x < 709.8 else math.inf
    return y if x == x else x


@intrinsic
def _bits_to_f32(typingctx, bits):
    """Reinterpret an int32 as a float32."""
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return sig, codegen


_F32 = np.float32
_LOG2E_F = _F32(1.4426950408889634)
_LN2_HI_F = _F32(0.693359375)      # 8 significant bits: k * hi is exact
_LN2_LO_F = _F32(-2.12194440e-4)
_HALF_F, _ONE_F = _F32(0.5), _F32(1.0)
_EXP_MAX_F, _EXP_MIN_F = _F32(88.8), _F32(-104.0)
_C2, _C3, _C4, _C5, _C6, _C7 = (_F32(1 / 2), _F32(1 / 6), _F32(1 / 24), _F32(1 / 120),
                                _F32(1 / 720), _F32(1 / 5040))


@njit(inline="always", cache=True)
def _pow2_f32(k):
    return _bits_to_f32(np.int32((k + 127) << 23))


@njit(inline="always", cache=True)
def exp_f32(x):
    """f32 exp in f32 arithmetic (16 lanes on AVX-512)."""
    xc = x if x < _EXP_MAX_F else _EXP_MAX_F
    xc = xc if xc > _EXP_MIN_F else _EXP_MIN_F
    kf = np.floor(xc * _LOG2E_F + _HALF_F)
    k = np.int32(kf)
    r = (xc - kf * _LN2_HI_F) - kf * _LN2_LO_F
    p = _C7
    p = p * r + _C6
    p = p * r + _C5
    p = p * r + _C4
    p = p * r + _C3
    p = p * r + _C2
    p = p * r + _ONE_F
    p = p * r + _ONE_F
    k1 = k >> np.int32(1)
    y = p * _pow2_f32(k1) * _pow2_f32(k - k1)
    y = y if x < _EXP_MAX_F else np.float32(math.inf)
    return y if x == x else x


_SQRT_HALF = 0.7071067811865476


@njit(inline="always", cache=True)
def log_f64(x):
    # denormals: scale into the normal range first
    small = x < 2.2250738585072014e-308
    xs = x * 18014398509481984.0 if small else x  # 2**54
    bits = _f64_to_bits(xs)
    e = ((bits >> 52) & 0x7FF) - 1023
    m = _bits_to_f64((bits & 0x000FFFFFFFFFFFFF) | 0x3FF0000000000000)  # m in [1, 2)
    big = m > 1.4142135623730951  # bring m into [sqrt(1/2), sqrt(2))
    m = m * 0.5 if big else m
    e = e + 1 if big else e
    e = e - 54 if small else e
    # log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    q = 1.0 / 23.0
    q = q * z + 1.0 / 21.0
    q = q * z + 1.0 / 19.0
    q = q * z + 1.0 / 17.0
    q = q * z + 1.0 / 15.0
    q = q * z + 1.0 / 13.0
    q = q * z + 1.0 / 11.0
    q = q * z + 1.0 / 9.0
    q = q * z + 1.0 / 7.0
    q = q * z + 1.0 / 5.0
    q = q * z + 1.0 / 3.0
    # f - s*f is 2s exactly in real arithmetic; this form keeps the rounding small
    hfsq = 0.5 * f * f
    logm = f - (hfsq - s * (hfsq + 2.0 * z * q))
    ef = float(e)
    y = ef * _LN2_HI + (logm + ef * _LN2_LO)
    y = y if x > 0.0 else (-math.inf if x == 0.0 else math.nan)
    y = y if x < math.inf else x
    return y if x == x else x


@njit(inline="always", cache=True)
def log_f32(x):
    return log_f64(float(x))
