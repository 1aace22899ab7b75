"""Transcendental functions that LLVM can vectorise.

PyPI's llvmlite has no SVML, so ``math.exp`` in a Numba loop is a scalar
libm call.  These versions are written in plain arithmetic (range reduction
plus a polynomial), with bit casts through tiny intrinsics, so that a loop
calling them vectorises (``<8 x double>`` / ``<16 x float>`` on AVX-512).
Every function is scalar: call it in the body of a loop.  The public ones
are plain ``@njit(cache=True)`` functions, compiled once per signature and
cached on disk beside this module, that LLVM always inlines into their caller
(the ``alwaysinline`` attribute, see :func:`_always_inline`), where the loop
then vectorises as if the code were written in it.  Numba's own inlining
(``inline="always"``, kept for the private pieces, which are inlined into the
public functions once, when those compile) would instead copy and re-type
the whole function into every call site of every kernel that uses it: about
0.1 s of compile time per call site for a function such as ``tanh_f64``.

Functions (``<fn>_f64`` takes and returns float64, ``<fn>_f32`` float32):
exp, log, expm1, log1p, tanh, logistic (1 / (1 + exp(-x))), sin, cos, tan,
erf, cbrt, pow(x, y), atan2(y, x).

Accuracy, measured against long-double references on samples spanning each
whole domain (overflow, underflow, denormals, every binade), and for the f32
unary functions on all 2^32 inputs: every f64 function is within 0.92 ulp,
every f32 function within 0.52 ulp except ``exp_f32`` (0.78) and
``tanh_f32`` (1.5).  Special values are NumPy's: NaN propagates, signed zeros
are kept (``tanh(-0.0) = -0.0``, ``expm1(-0.0) = -0.0``), ``expm1(-inf) = -1``,
``log1p(-1) = -inf``, ``erf(+-inf) = +-1``, ``sin(inf) = nan``, results
that underflow are denormal (no flush to zero) — except ``logistic``, which
is 0 where XLA's 1 / (1 + exp(-x)) is (exp(-x) overflows) — and ``pow`` follows C99 /
NumPy: ``pow(x, 0) = 1`` and ``pow(1, y) = 1`` even for NaN, a negative base
needs an integer exponent (odd exponents keep the sign), zeros and
infinities as in C99.

How (what keeps a loop vectorisable):

* every branch of a piecewise function is computed and the answer is picked
  with ``a if cond else b`` on already computed values, which LLVM turns
  into a ``select``;
* bit casts go through one-instruction intrinsics; ``_fma`` is LLVM's
  ``llvm.fma``: Horner steps and error-free products (double-double
  arithmetic where f64 needs more than 53 bits: pow's log, tanh, erf...).
  It is one instruction on every x86-64 CPU since 2013 (FMA3) and on
  AArch64; without hardware FMA it would be a slow libm call;
* no libm calls on the common path, and no fast-math flags (they would let
  LLVM assume NaN and infinity away, and contraction would break the
  error-free transformations);
* polynomial coefficients are minimax fits (Remez exchange) made for this
  module; the f64 reductions use Cody-Waite constants with exact products.

The f32 functions compute in f64 with polynomials sized for f32 (8 lanes;
rounded once at the end, so they are correctly rounded almost always),
except ``exp_f32`` and ``tanh_f32``, which work in f32 arithmetic (16
lanes, about twice the throughput).

Trigonometric functions and huge arguments
------------------------------------------
``sin``/``cos``/``tan`` reduce the argument modulo pi/2 with a three-part
Cody-Waite reduction whose products are exact, exact up to
``TRIG_BOUND_F64`` (2^20 pi/2, about 1.6e6) for f64 and ``TRIG_BOUND_F32``
(2^29, about 5.4e8; checked on every f32 below it) for f32.  Beyond the
bound:

* ``sin_f64(x)`` (likewise cos, tan and the f32 ones) is correct for every
  x: it calls ``math.sin`` for ``|x| > bound``.  A select between the fast
  path and a libm call does not keep the loop fast: LLVM widens the call
  into ``llvm.sin.v8f64``, eight scalar libm calls for *every* vector of the
  loop (measured: 84 ms for 4M elements against 6.6 ms without the call),
  so a loop calling ``sin_f64`` is as slow as a ``math.sin`` loop;
* ``sin_f64_reduced(x)`` has no libm call: exact for ``|x| <= bound``, NaN
  beyond (and for inf/NaN).  Kernels should use it with a guard counted in
  the same loop and a rare scalar fix-up pass::

      nbig = 0
      for i in range(n):
          v = x[i]
          out[i] = sin_f64_reduced(v)
          nbig += trig_needs_libm_f64(v)      # an integer sum: still vectorised
      if nbig:                                # almost never taken
          for i in range(n):
              if trig_needs_libm_f64(x[i]):
                  out[i] = math.sin(x[i])

``trig_needs_libm_f64(x)`` / ``trig_needs_libm_f32(x)`` is the guard: true
for finite ``|x| > bound`` (inf and NaN need no fix-up: the reduced
functions return NaN for them, as NumPy does).
"""
from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = [
    "exp_f64", "exp_f32", "log_f64", "log_f32",
    "expm1_f64", "expm1_f32", "log1p_f64", "log1p_f32",
    "tanh_f64", "tanh_f32", "logistic_f64", "logistic_f32", "logistic_f16",
    "sin_f64", "sin_f32", "cos_f64", "cos_f32", "tan_f64", "tan_f32",
    "sin_f64_reduced", "sin_f32_reduced", "cos_f64_reduced", "cos_f32_reduced",
    "tan_f64_reduced", "tan_f32_reduced",
    "TRIG_BOUND_F64", "TRIG_BOUND_F32", "trig_needs_libm_f64", "trig_needs_libm_f32",
    "erf_f64", "erf_f32", "cbrt_f64", "cbrt_f32", "pow_f64", "pow_f32",
    "atan2_f64", "atan2_f32",
]


# --------------------------------------------------------------------------
# one-instruction intrinsics
# --------------------------------------------------------------------------

# The public functions: compiled on their own (and cached), inlined by LLVM.
# error_model="numpy": no ZeroDivisionError branch (which would also stop the
# caller's loop from vectorising).
_PUBLIC = dict(cache=True, error_model="numpy")


@intrinsic
def _always_inline(typingctx):
    """Give the function being compiled LLVM's ``alwaysinline`` attribute: a
    caller that links it (any Numba function calling it) gets its body inlined
    by LLVM, so the caller's loop vectorises; the function itself compiles
    once and is cached, instead of being re-typed in every caller as Numba's
    ``inline="always"`` does.  No code of its own."""
    sig = types.none()

    def codegen(context, builder, signature, args):
        attrs = builder.function.attributes
        attrs.discard("noinline")
        attrs.add("alwaysinline")
        return context.get_dummy_value()
    return sig, codegen


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


@intrinsic
def _bits_to_f32(typingctx, bits):
    """Reinterpret an int32 as a float32."""
    sig = types.float32(types.int32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return sig, codegen


@intrinsic
def _f32_to_bits(typingctx, value):
    sig = types.int32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return sig, codegen


@intrinsic
def _fma(typingctx, a, b, c):
    """a * b + c with one rounding (``llvm.fma``: one instruction with FMA3)."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None
    sig = a(a, b, c)

    def codegen(context, builder, signature, args):
        return builder.fma(args[0], args[1], args[2])
    return sig, codegen


_TINY_F64 = 2.2250738585072014e-308   # smallest normal f64
_TWO54 = 18014398509481984.0
_MANT = 0x000FFFFFFFFFFFFF


# --------------------------------------------------------------------------
# exp, log (f64)
# --------------------------------------------------------------------------

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01   # 32 significant bits: k * hi is exact
_LN2_LO = 1.90821492927058770002e-10


@njit(inline="always", cache=True)
def _pow2(k):
    """2.0 ** k for an integer k in [-1022, 1023]."""
    return _bits_to_f64((k + 1023) << 52)


# (expm1(r) - r - r^2/2) / r^3 on |r| <= 0.35, minimax, relative error of
# expm1 2^-60.5
_EM0 = 0.16666666666666674
_EM1 = 0.04166666666666667
_EM2 = 0.008333333333321305
_EM3 = 0.0013888888888880099
_EM4 = 0.0001984126988932167
_EM5 = 2.4801587336442172e-05
_EM6 = 2.755723927756978e-06
_EM7 = 2.7557261550942836e-07
_EM8 = 2.511119199685937e-08
_EM9 = 2.091916522483084e-09


@njit(inline="always", cache=True)
def _expm1_tail(r):
    """(expm1(r) - r - r*r/2) / r**3 for |r| <= 0.35."""
    p = _EM9
    p = _fma(p, r, _EM8)
    p = _fma(p, r, _EM7)
    p = _fma(p, r, _EM6)
    p = _fma(p, r, _EM5)
    p = _fma(p, r, _EM4)
    p = _fma(p, r, _EM3)
    p = _fma(p, r, _EM2)
    p = _fma(p, r, _EM1)
    p = _fma(p, r, _EM0)
    return p


# log(1+f) = f - f^2/2 + s (f^2/2 + R), s = f / (2 + f), R = z (LG0 + LG1 z + ...),
# z = s^2 <= 0.02944; minimax, error 2^-57.6 relative to R
_LG0 = 0.666666666666671
_LG1 = 0.39999999999519836
_LG2 = 0.28571428729280784
_LG3 = 0.22222199091327774
_LG4 = 0.18183571520251482
_LG5 = 0.15313164827993792
_LG6 = 0.14810516456625078


@njit(inline="always", cache=True)
def _log_r(z):
    p = _LG6
    p = _fma(p, z, _LG5)
    p = _fma(p, z, _LG4)
    p = _fma(p, z, _LG3)
    p = _fma(p, z, _LG2)
    p = _fma(p, z, _LG1)
    p = _fma(p, z, _LG0)
    return p * z


@njit(inline="always", cache=True)
def _exp_core(xc):
    """e^xc = (ph + pl) 2^k for xc in [-746, 710] (ph + pl to ~2^-70); also
    em = expm1(xc - k ln2) rounded."""
    kf = np.floor(xc * _LOG2E + 0.5)
    k = np.int64(kf)
    hi = xc - kf * _LN2_HI                  # exact
    lo = kf * _LN2_LO
    r = hi - lo
    c = (hi - r) - lo                       # r + c = hi - lo to ~2^-106
    rr = r * r
    rrl = _fma(r, r, -rr)                   # r^2 = rr + rrl
    t = rr * 0.5 + (rr * r * _expm1_tail(r) + (0.5 * rrl + c * (1.0 + r)))  # expm1(r+c) = r+t
    em = r + t
    eml = t - (em - r)                      # em + eml = r + t  (|t| < |r|)
    ph = 1.0 + em
    pl = ((1.0 - ph) + em) + eml
    return ph, pl, k, em


@njit(inline="always", cache=True)
def _scale2(p, k):
    """p * 2^k for k in [-2044, 2046], in two steps so that denormal and
    overflowing results round once."""
    k1 = k >> 1
    return p * _pow2(k1) * _pow2(k - k1)


@njit(**_PUBLIC)
def exp_f64(x):
    # clamp (NaN compares false and is restored at the end)
    _always_inline()
    xc = x if x < 709.8 else 709.8
    xc = xc if xc > -745.2 else -745.2
    ph, pl, k, _ = _exp_core(xc)
    y = _scale2(ph + pl, k)
    y = y if x < 709.8 else math.inf
    return y if x == x else x


@njit(**_PUBLIC)
def log_f64(x):
    # denormals: scale into the normal range first
    _always_inline()
    small = x < _TINY_F64
    xs = x * _TWO54 if small else x
    # x = 2^e m, m in [sqrt(1/2), sqrt(2)): offset the bits so that the exponent
    # field rounds at sqrt(2) instead of 2
    ib = _f64_to_bits(xs) + (0x3FF0000000000000 - 0x3FE6A09E00000000)
    e = (ib >> 52) - 1023
    e = e - 54 if small else e
    m = _bits_to_f64((ib & _MANT) + 0x3FE6A09E00000000)
    f = m - 1.0
    s = f / (2.0 + f)
    hfsq = 0.5 * f * f
    ef = float(e)
    # log(1+f) = f - f^2/2 + s (f^2/2 + R(s^2)), summed small terms first
    y = (((s * (hfsq + _log_r(s * s)) + ef * _LN2_LO) - hfsq) + f) + ef * _LN2_HI
    y = y if x > 0.0 else (-math.inf if x == 0.0 else math.nan)
    y = y if x < math.inf else x
    return y if x == x else x


# --------------------------------------------------------------------------
# expm1, tanh, logistic (f64)
# --------------------------------------------------------------------------

@njit(inline="always", cache=True)
def _expm1_parts(ph, pl, k):
    """2^k (ph + pl) - 1 = hi + lo for k <= 60, the -1 applied exactly."""
    s2 = _pow2(k)
    a = ph * s2                             # exact
    s = a - 1.0
    bb = s - a
    e = (a - (s - bb)) + (-1.0 - bb)        # s + e = a - 1
    lo = e + pl * s2
    hi = s + lo
    return hi, lo - (hi - s)


@njit(**_PUBLIC)
def expm1_f64(x):
    _always_inline()
    xc = x if x < 709.8 else 709.8
    xc = xc if xc > -45.0 else -45.0        # expm1(x) rounds to -1 below -38
    ph, pl, k, em = _exp_core(xc)
    kk = k if k < 60 else 60
    y1, _ = _expm1_parts(ph, pl, kk)
    y1 = em if k == 0 else y1               # |x| < ln2/2: expm1(r) directly
    y2 = _scale2(ph + pl, k)                # k > 60: the -1 is below the rounding
    y = y1 if k <= 60 else y2
    y = y if x < 709.8 else math.inf
    y = y if abs(x) >= 5.551115123125783e-17 else x     # |x| < 2^-54: x (keeps -0.0)
    return y if x == x else x


# tanh(x) = x + x^3 Q(x^2) on |x| < 0.55, minimax, relative error 2^-59.7
_TH0 = -0.33333333333333315
_TH1 = 0.13333333333329028
_TH2 = -0.0539682539648121
_TH3 = 0.02186948840811169
_TH4 = -0.00886323286255056
_TH5 = 0.003592093811689812
_TH6 = -0.0014555497419499969
_TH7 = 0.0005884570739464214
_TH8 = -0.0002333795678145381
_TH9 = 8.327191507273147e-05
_TH10 = -1.9445051576513284e-05


@njit(**_PUBLIC)
def tanh_f64(x):
    _always_inline()
    a = abs(x)
    z = x * x
    q = _TH10
    q = _fma(q, z, _TH9)
    q = _fma(q, z, _TH8)
    q = _fma(q, z, _TH7)
    q = _fma(q, z, _TH6)
    q = _fma(q, z, _TH5)
    q = _fma(q, z, _TH4)
    q = _fma(q, z, _TH3)
    q = _fma(q, z, _TH2)
    q = _fma(q, z, _TH1)
    q = _fma(q, z, _TH0)
    small = math.copysign(x + x * z * q, x)     # keeps -0.0
    # |x| >= 0.55: 1 - 2 / (expm1(2|x|) + 2) in double-double (tanh = 1 beyond 20)
    a2 = a + a
    a2 = a2 if a2 < 40.0 else 40.0
    ph, pl, k, _ = _exp_core(a2)
    th, tl = _expm1_parts(ph, pl, k)
    dh = th + 2.0
    bv = dh - th
    dl = ((th - (dh - bv)) + (2.0 - bv)) + tl   # dh + dl = th + tl + 2
    qh = 2.0 / dh
    ql = (_fma(-qh, dh, 2.0) - qh * dl) / dh
    r1 = 1.0 - qh
    big = r1 + (((1.0 - r1) - qh) - ql)
    big = math.copysign(big, x)
    y = small if a < 0.55 else big
    return y if x == x else x


# XLA computes logistic as 1 / (1 + exp(-x)) (its LogisticExpander): the
# result is 0 below these, where exp(-x) overflows (the subnormals above them
# are IEEE's; XLA:CPU itself flushes subnormal results to zero)
_LOGISTIC_ZERO_F64 = -709.782712893384       # exp(-x) is finite from here up
_LOGISTIC_ZERO_F32 = -88.72283172607422      # the same for f32 (an f32 value)


@njit(**_PUBLIC)
def logistic_f64(x):
    """1 / (1 + exp(-x)), as exp(x) / (1 + exp(x)) for x < 0; exp(-|x|) is
    carried as a double-double.  0 where exp(-x) overflows (x below
    ``_LOGISTIC_ZERO_F64``), as XLA's expansion 1 / (1 + exp(-x)) gives."""
    _always_inline()
    xc = -abs(x)
    xc = xc if xc > -745.2 else -745.2
    ph, pl, k, _ = _exp_core(xc)
    k1 = k >> 1
    s1 = _pow2(k1)
    s2 = _pow2(k - k1)
    eh = ph * s1 * s2                       # e = exp(-|x|) = eh + el, <= 1
    el = pl * s1 * s2
    dh = 1.0 + eh
    dl = ((1.0 - dh) + eh) + el             # dh + dl = 1 + e
    q = 1.0 / dh
    pos = q + q * (_fma(-q, dh, 1.0) - q * dl)
    qn = eh / dh
    neg = qn + (_fma(-qn, dh, eh) + el - qn * dl) * q
    neg = neg if x >= _LOGISTIC_ZERO_F64 else 0.0
    y = pos if x >= 0.0 else neg
    return y if x == x else x


# --------------------------------------------------------------------------
# log1p (f64)
# --------------------------------------------------------------------------

@njit(**_PUBLIC)
def log1p_f64(x):
    _always_inline()
    u = 1.0 + x
    bb = u - 1.0
    c = (1.0 - (u - bb)) + (x - bb)         # u + c = 1 + x exactly
    # u = 2^e m, m in [sqrt(1/2), sqrt(2)): offset the bits so that the exponent
    # field rounds at sqrt(2) instead of 2
    ib = _f64_to_bits(u) + (0x3FF0000000000000 - 0x3FE6A09E00000000)
    e = (ib >> 52) - 1023
    m = _bits_to_f64((ib & _MANT) + 0x3FE6A09E00000000)
    f = m - 1.0
    s = f / (2.0 + f)
    hfsq = 0.5 * f * f
    ef = float(e)
    y = (((s * (hfsq + _log_r(s * s)) + (ef * _LN2_LO + c / u)) - hfsq) + f) + ef * _LN2_HI
    y = y if x > -1.0 else (-math.inf if x == -1.0 else math.nan)
    y = y if x < math.inf else x
    y = y if abs(x) >= 5.551115123125783e-17 else x     # |x| < 2^-54 (keeps -0.0)
    return y if x == x else x


# --------------------------------------------------------------------------
# sin, cos, tan (f64)
# --------------------------------------------------------------------------

TRIG_BOUND_F64 = 1647099.0          # < 2^20 pi/2: the reduction below is exact
_INV_PIO2 = 0.6366197723675814
_P1 = 1.5707963267341256            # pi/2 in 33-bit pieces: k * P_i is exact
_P2 = 6.077100506303966e-11
_P3 = 2.0222662487111665e-21
_P3T = 8.4784276603689e-32          # pi/2 - P1 - P2 - P3

# sin(y) = y + y^3 S(y^2), cos(y) = 1 - y^2/2 + y^4 C(y^2) on |y| <= pi/4;
# minimax, relative errors 2^-57 and 2^-62
_S0 = -0.1666666666666664
_S1 = 0.008333333333323657
_S2 = -0.00019841269830138324
_S3 = 2.755731364928387e-06
_S4 = -2.5050734117122176e-08
_S5 = 1.589468203495397e-10
_CO0 = 0.04166666666666665
_CO1 = -0.0013888888888882814
_CO2 = 2.4801587294607418e-05
_CO3 = -2.755731573140549e-07
_CO4 = 2.0875896606752916e-09
_CO5 = -1.1367916230712686e-11


@njit(inline="always", cache=True)
def _rem_pio2(x):
    """n, y0, y1 with x = n pi/2 + (y0 + y1), |y0| <= pi/4 (|x| <= TRIG_BOUND_F64;
    0 beyond)."""
    xc = x if abs(x) <= TRIG_BOUND_F64 else 0.0
    kf = np.floor(xc * _INV_PIO2 + 0.5)
    n = np.int64(kf)
    r1 = xc - kf * _P1                  # exact (Sterbenz)
    b = kf * _P2                        # exact
    s1 = r1 - b
    t = s1 - r1
    e1 = (r1 - (s1 - t)) - (b + t)      # s1 + e1 = r1 - b exactly
    c = kf * _P3                        # exact
    s2 = s1 - c
    t = s2 - s1
    e2 = (s1 - (s2 - t)) - (c + t)      # s2 + e2 = s1 - c exactly
    tail = (e1 + e2) - kf * _P3T
    y0 = s2 + tail
    y1 = tail - (y0 - s2)
    return n, y0, y1


@njit(inline="always", cache=True)
def _sin_kernel(y0, y1):
    """sin(y0 + y1) ~ y0 + lo."""
    z = y0 * y0
    p = _S5
    p = _fma(p, z, _S4)
    p = _fma(p, z, _S3)
    p = _fma(p, z, _S2)
    p = _fma(p, z, _S1)
    p = _fma(p, z, _S0)
    return y0 * z * p + y1 * (1.0 - 0.5 * z)


@njit(inline="always", cache=True)
def _cos_kernel(y0, y1):
    """cos(y0 + y1) ~ w + lo."""
    z = y0 * y0
    zl = _fma(y0, y0, -z)
    p = _CO5
    p = _fma(p, z, _CO4)
    p = _fma(p, z, _CO3)
    p = _fma(p, z, _CO2)
    p = _fma(p, z, _CO1)
    p = _fma(p, z, _CO0)
    hz = 0.5 * z
    w = 1.0 - hz
    lo = (((1.0 - w) - hz) - 0.5 * zl) + (z * z * p - y0 * y1)
    return w, lo


@njit(**_PUBLIC)
def trig_needs_libm_f64(x):
    """True where the *_f64_reduced functions do not apply (finite |x| > bound)."""
    _always_inline()
    return (abs(x) > TRIG_BOUND_F64) & (abs(x) < math.inf)


@njit(**_PUBLIC)
def sin_f64_reduced(x):
    _always_inline()
    n, y0, y1 = _rem_pio2(x)
    s = y0 + _sin_kernel(y0, y1)
    w, lo = _cos_kernel(y0, y1)
    c = w + lo
    v = c if n & 1 else s
    v = -v if n & 2 else v
    v = v if abs(x) >= 7.450580596923828e-09 else x     # |x| < 2^-27: sin x = x
    return v if abs(x) <= TRIG_BOUND_F64 else math.nan


@njit(**_PUBLIC)
def cos_f64_reduced(x):
    _always_inline()
    n, y0, y1 = _rem_pio2(x)
    s = y0 + _sin_kernel(y0, y1)
    w, lo = _cos_kernel(y0, y1)
    c = w + lo
    v = s if n & 1 else c
    v = -v if (n + 1) & 2 else v
    return v if abs(x) <= TRIG_BOUND_F64 else math.nan


@njit(**_PUBLIC)
def tan_f64_reduced(x):
    _always_inline()
    n, y0, y1 = _rem_pio2(x)
    slo = _sin_kernel(y0, y1)
    sh = y0 + slo
    sl = slo - (sh - y0)
    w, clo = _cos_kernel(y0, y1)
    ch = w + clo
    cl = clo - (ch - w)
    odd = (n & 1) != 0
    nh = -ch if odd else sh
    nl = -cl if odd else sl
    dh = sh if odd else ch
    dl = sl if odd else cl
    q = nh / dh                                         # double-double division
    rho = _fma(-q, dh, nh) + nl - q * dl
    v = q + rho / dh
    v = v if abs(x) >= 7.450580596923828e-09 else x     # |x| < 2^-27: tan x = x
    return v if abs(x) <= TRIG_BOUND_F64 else math.nan


@njit(**_PUBLIC)
def sin_f64(x):
    _always_inline()
    if abs(x) > TRIG_BOUND_F64:
        return math.sin(x)
    return sin_f64_reduced(x)


@njit(**_PUBLIC)
def cos_f64(x):
    _always_inline()
    if abs(x) > TRIG_BOUND_F64:
        return math.cos(x)
    return cos_f64_reduced(x)


@njit(**_PUBLIC)
def tan_f64(x):
    _always_inline()
    if abs(x) > TRIG_BOUND_F64:
        return math.tan(x)
    return tan_f64_reduced(x)


# --------------------------------------------------------------------------
# erf (f64)
# --------------------------------------------------------------------------

_ERF_C0H = 1.1283791670955126       # 2/sqrt(pi) as a double-double
_ERF_C0L = 1.533545961316588e-17
# |x| < 1: erf(x) = 2/sqrt(pi) x + x^3 A(x^2); minimax, 2^-61.7
_EA0 = -0.37612638903183754
_EA0L = 1.3391897206030649e-17
_EA1 = 0.11283791670955005
_EA2 = -0.026866170645096648
_EA3 = 0.005223977624977849
_EA4 = -0.000854832698835728
_EA5 = 0.00012055331333115492
_EA6 = -1.4925599474057324e-05
_EA7 = 1.6461052243877555e-06
_EA8 = -1.6350714274709526e-07
_EA9 = 1.4661600515641598e-08
_EA10 = -1.1376901446837223e-09
_EA11 = 5.959517045985906e-11
# 1 <= |x| < 6: erf(x) = 1 - exp(-x^2) F(x), F = exp(x^2) erfc(x) as a
# polynomial in x - 1.5 on [1, 2] (FA) and in x - 4 on [2, 6] (FB); minimax
# for the absolute error of erf, 2^-59.4
_FA = (0.3215854164543175, -0.16362291773255982, 0.07615103985547939, -0.03293090529959838,
       0.01337734095287823, -0.005145957546374629, 0.0018861348836284382,
       -0.000661930098483916, 0.0002233098333155489, -7.265859148133633e-05,
       2.28653111039162e-05, -6.976854427059381e-06, 2.0620568241278556e-06,
       -5.904760352341607e-07, 1.799590550390845e-07, -5.387150330998768e-08)
_FB = (0.13699945763582025, -0.03238350605733582, 0.007465432699231962, -0.001681185775153809,
       0.0003703449445849934, -7.990704993309716e-05, 1.6939857039084674e-05,
       -3.4472785319011687e-06, 7.61883262480499e-07, -1.550933106292595e-07,
       -2.686255772890367e-08, -6.053896731149578e-08, -2.9514238477249523e-08,
       -1.0559709328672184e-08, -2.012009283124019e-09, -1.9732220312486476e-10)
(_FA0, _FA1, _FA2, _FA3, _FA4, _FA5, _FA6, _FA7, _FA8, _FA9, _FA10, _FA11, _FA12, _FA13,
 _FA14, _FA15) = _FA
(_FB0, _FB1, _FB2, _FB3, _FB4, _FB5, _FB6, _FB7, _FB8, _FB9, _FB10, _FB11, _FB12, _FB13,
 _FB14, _FB15) = _FB


@njit(**_PUBLIC)
def erf_f64(x):
    _always_inline()
    a = abs(x)
    z = x * x
    p = _EA11
    p = _fma(p, z, _EA10)
    p = _fma(p, z, _EA9)
    p = _fma(p, z, _EA8)
    p = _fma(p, z, _EA7)
    p = _fma(p, z, _EA6)
    p = _fma(p, z, _EA5)
    p = _fma(p, z, _EA4)
    p = _fma(p, z, _EA3)
    p = _fma(p, z, _EA2)
    p = _fma(p, z, _EA1)
    pl = p * z + _EA0L                      # A = _EA0 + pl, _EA0 + _EA0L = -2/(3 sqrt(pi))
    # erf = x c0 + x^3 (_EA0 + pl): the two big products exact, one rounding at the end
    zl = _fma(x, x, -z)                     # x^2 = z + zl, x^3 = xz + xzl
    xz = x * z
    xzl = _fma(x, z, -xz) + x * zl
    a1 = _ERF_C0H * x
    a1l = _fma(_ERF_C0H, x, -a1)
    a2 = xz * _EA0
    a2l = _fma(xz, _EA0, -a2)
    sa = a1 + a2
    bv = sa - a1
    sal = (a1 - (sa - bv)) + (a2 - bv)
    ya = sa + (sal + a1l + a2l + xz * pl + xzl * (_EA0 + pl) + x * _ERF_C0L)
    ya = math.copysign(ya, x)               # keeps -0.0
    # 1 <= |x| < 6: one polynomial, its coefficients picked per interval
    ac = a if a < 6.0 else 6.0
    ac = ac if ac > 1.0 else 1.0
    lo = ac < 2.0
    u = ac - (1.5 if lo else 4.0)
    f = _FA15 if lo else _FB15
    f = _fma(f, u, (_FA14 if lo else _FB14))
    f = _fma(f, u, (_FA13 if lo else _FB13))
    f = _fma(f, u, (_FA12 if lo else _FB12))
    f = _fma(f, u, (_FA11 if lo else _FB11))
    f = _fma(f, u, (_FA10 if lo else _FB10))
    f = _fma(f, u, (_FA9 if lo else _FB9))
    f = _fma(f, u, (_FA8 if lo else _FB8))
    f = _fma(f, u, (_FA7 if lo else _FB7))
    f = _fma(f, u, (_FA6 if lo else _FB6))
    f = _fma(f, u, (_FA5 if lo else _FB5))
    f = _fma(f, u, (_FA4 if lo else _FB4))
    f = _fma(f, u, (_FA3 if lo else _FB3))
    f = _fma(f, u, (_FA2 if lo else _FB2))
    f = _fma(f, u, (_FA1 if lo else _FB1))
    f = _fma(f, u, (_FA0 if lo else _FB0))
    zh = ac * ac
    zhl = _fma(ac, ac, -zh)                 # x^2 = zh + zhl exactly
    ph, pl, k, _ = _exp_core(-zh)              # exp(-x^2) = (eh + el), no underflow
    sc = _pow2(k)
    eh = ph * sc
    el = (pl - ph * zhl) * sc
    pfh = eh * f                            # exp(-x^2) F = pfh + pfl
    pfl = _fma(eh, f, -pfh) + el * f
    r1 = 1.0 - pfh
    yb = math.copysign(r1 + (((1.0 - r1) - pfh) - pfl), x)
    y = ya if a < 1.0 else yb
    y = y if a < 6.0 else math.copysign(1.0, x)
    return y if x == x else x


# --------------------------------------------------------------------------
# cbrt (f64): no division
# --------------------------------------------------------------------------

_THIRD = 1.0 / 3.0
# m^(-1/3) on [1, 2], minimax quadratic (relative error 2^-9.1)
_CB0 = 1.3881568674575668
_CB1 = -0.4833224809571791
_CB2 = 0.09339791159340728
_CBRT2_INV = 0.7937005259840998      # 2^(-1/3)
_CBRT4_INV = 0.6299605249474366      # 2^(-2/3)


@njit(**_PUBLIC)
def cbrt_f64(x):
    _always_inline()
    a = abs(x)
    small = a < _TINY_F64
    as_ = a * _TWO54 if small else a
    bits = _f64_to_bits(as_)
    e = (bits >> 52) - 1023
    q = np.int64(np.floor((float(e) + 0.5) * _THIRD))     # floor(e / 3)
    rem = e - 3 * q                                       # 0, 1, 2
    mant = _bits_to_f64((bits & _MANT) | 0x3FF0000000000000)   # [1, 2)
    m = mant * 4.0 if rem == 2 else (mant * 2.0 if rem == 1 else mant)
    # y ~ m^(-1/3): polynomial, then Newton steps y += y (1 - m y^3) / 3
    y = (_CB2 * mant + _CB1) * mant + _CB0
    y = y * (_CBRT4_INV if rem == 2 else (_CBRT2_INV if rem == 1 else 1.0))
    y = y + y * (1.0 - m * (y * y * y)) * _THIRD
    y = y + y * (1.0 - m * (y * y * y)) * _THIRD
    t = m * (y * y)                                       # m^(1/3), 2^-32
    # last Newton step on t with the residual m - t^3 computed exactly
    t2h = t * t
    t2l = _fma(t, t, -t2h)
    t3h = t2h * t
    t3l = _fma(t2h, t, -t3h) + t2l * t
    t = t + ((m - t3h) - t3l) * (y * y) * _THIRD
    qq = q - 18 if small else q
    r = math.copysign(t * _pow2(qq), x)
    return r if ((a > 0.0) & (a < math.inf)) else x


# --------------------------------------------------------------------------
# pow (f64): exp(y log|x|) in double-double, C99 special cases
# --------------------------------------------------------------------------

_LN2_H42 = 0.6931471805598903        # 42 bits: e * _LN2_H42 is exact
_LN2_L42 = 5.497923018708371e-14
_TWO3_H = 0.6666666666666666         # 2/3 as a double-double
_TWO3_L = 3.700743415417188e-17
# log(m) = 2s + 2s^3/3 + s^5 Q(s^2); minimax, relative error 2^-71.5
_LQ0 = 0.39999999999999997
_LQ1 = 0.28571428571432894
_LQ2 = 0.22222222220359233
_LQ3 = 0.18181818545402115
_LQ4 = 0.15384577505345132
_LQ5 = 0.13335581718712003
_LQ6 = 0.11688625336267801
_LQ7 = 0.11882822579967214


@njit(inline="always", cache=True)
def _log_dd(a):
    """log(a) as a double-double (hi, lo), relative error ~2^-70, for finite a > 0."""
    small = a < _TINY_F64
    as_ = a * _TWO54 if small else a
    ib = _f64_to_bits(as_) + (0x3FF0000000000000 - 0x3FE6A09E00000000)
    e = (ib >> 52) - 1023
    e = e - 54 if small else e
    m = _bits_to_f64((ib & _MANT) + 0x3FE6A09E00000000)     # [sqrt(1/2), sqrt(2))
    f = m - 1.0                                             # exact
    d = 2.0 + f
    dl = (2.0 - d) + f                                      # d + dl = 2 + f exactly
    sh = f / d
    sl = (_fma(-sh, d, f) - sh * dl) / d                    # s = f / (2 + f) = sh + sl
    zh = sh * sh
    zl = _fma(sh, sh, -zh)
    c3h = zh * sh                                           # s^3 = c3h + c3l
    c3l = _fma(zh, sh, -c3h) + zl * sh + 3.0 * zh * sl
    t3h = c3h * _TWO3_H                                     # 2 s^3 / 3 = t3h + t3l
    t3l = _fma(c3h, _TWO3_H, -t3h) + (c3h * _TWO3_L + c3l * _TWO3_H)
    q = _LQ7
    q = _fma(q, zh, _LQ6)
    q = _fma(q, zh, _LQ5)
    q = _fma(q, zh, _LQ4)
    q = _fma(q, zh, _LQ3)
    q = _fma(q, zh, _LQ2)
    q = _fma(q, zh, _LQ1)
    q = _fma(q, zh, _LQ0)
    tail = c3h * zh * q                                     # s^5 Q
    s2 = sh + sh
    lh = s2 + t3h                                           # |s2| >= |t3h|
    ll = ((s2 - lh) + t3h) + ((sl + sl) + t3l + tail)
    ef = float(e)
    eh = ef * _LN2_H42                                      # exact
    hh = eh + lh                                            # two-sum
    bv = hh - eh
    hl = (eh - (hh - bv)) + (lh - bv)
    lo = hl + (ll + ef * _LN2_L42)
    hi = hh + lo
    return hi, lo - (hi - hh)


@njit(inline="always", cache=True)
def _exp_dd(th, tl):
    """exp(th + tl), |tl| <= 2^-40 |th|; overflow to inf, underflow to denormals/0."""
    inside = (th < 710.0) & (th > -746.0)
    tc = th if th < 710.0 else 710.0
    tc = tc if tc > -746.0 else -746.0
    tl = tl if inside else 0.0              # clamped: overflow / underflow regardless of tl
    kf = np.floor(tc * _LOG2E + 0.5)
    k = np.int64(kf)
    rh = tc - kf * _LN2_HI                  # exact
    rl = tl - kf * _LN2_LO
    r = rh + rl
    bv = r - rh
    rlo = (rh - (r - bv)) + (rl - bv)       # r + rlo = rh + rl
    rr = r * r
    rrl = _fma(r, r, -rr)
    t = rr * 0.5 + (rr * r * _expm1_tail(r) + (0.5 * rrl + rlo * (1.0 + r)))
    em = r + t                              # expm1(r + rlo) = em + eml
    eml = t - (em - r)
    ph = 1.0 + em
    pl = ((1.0 - ph) + em) + eml
    return _scale2(ph + pl, k)


@njit(inline="always", cache=True)
def _pow_special(x, y, res):
    """C99/NumPy special cases of pow around a general result res = |x|^y."""
    ax = abs(x)
    ay = abs(y)
    yint = np.floor(y) == y                  # true for +-inf, handled below
    yhalf = 0.5 * y
    yodd = yint & (np.floor(yhalf) != yhalf) & (ay < 9007199254740992.0)
    neg = x < 0.0
    r = -res if (neg & yodd) else res
    r = math.nan if (neg & ~yint) else r
    # x = +-0
    rz = (x if yodd else 0.0) if y > 0.0 else (math.copysign(math.inf, x) if yodd else math.inf)
    r = rz if x == 0.0 else r
    # x = +-inf
    rinf = ((x if yodd else math.inf) if y > 0.0 else (-0.0 if (yodd & neg) else 0.0))
    r = rinf if ax == math.inf else r
    # y = +-inf
    ryinf = 1.0 if ax == 1.0 else ((0.0 if y > 0.0 else math.inf) if ax < 1.0
                                   else (math.inf if y > 0.0 else 0.0))
    r = ryinf if ay == math.inf else r
    r = r if ((x == x) & (y == y)) else math.nan
    r = 1.0 if y == 0.0 else r
    return 1.0 if x == 1.0 else r


@njit(**_PUBLIC)
def pow_f64(x, y):
    _always_inline()
    ax = abs(x)
    axc = ax if ((ax > 0.0) & (ax < math.inf)) else 1.0
    lh, ll = _log_dd(axc)
    th = y * lh
    tl = _fma(y, lh, -th) + y * ll
    res = _exp_dd(th, tl)
    return _pow_special(x, y, res)


# --------------------------------------------------------------------------
# atan2
# --------------------------------------------------------------------------

# atan(u) = u + u^3 P(u^2) on |u| <= tan(pi/8); minimax, relative errors 2^-58.5
# (f64, _AT) and 2^-35.3 (f32, _ATF)
_AT = (-0.33333333333333265, 0.1999999999996868, -0.1428571428130536, 0.11111110822066937,
       -0.09090898470366134, 0.07692067054676717, -0.06663126758300776, 0.05847720692151691,
       -0.05037285359900884, 0.03798635084211119, -0.017796703967470347)
_AT0, _AT1, _AT2, _AT3, _AT4, _AT5, _AT6, _AT7, _AT8, _AT9, _AT10 = _AT
_ATF0, _ATF1, _ATF2, _ATF3, _ATF4, _ATF5 = (
    -0.3333333248988786, 0.19999903035099872, -0.14281981408614453, 0.11044348904214099,
    -0.08474266439625827, 0.04739730983416582)
_PIO4_H = 0.7853981633974483         # pi/4 as a double-double
_PIO4_L = 3.061616997868383e-17
_TAN_PI8 = 0.41421356237309503


@njit(inline="always", cache=True)
def _atan2_setup(y, x):
    """num <= den (never both 0 or both inf), the reduction flag, and the
    result's form K pi/4 + sg atan(u)."""
    ax = abs(x)
    ay = abs(y)
    swap = ay > ax
    num = ax if swap else ay
    den = ay if swap else ax
    both_inf = num == math.inf
    den_inf = den == math.inf
    num = (1.0 if both_inf else 0.0) if den_inf else num     # inf/inf -> 1/1, x/inf -> 0/1
    den = 1.0 if (den_inf | (den == 0.0)) else den           # 0/0 -> 0/1
    red = num > _TAN_PI8 * den              # atan(t) = pi/4 + atan((t - 1) / (t + 1))
    xneg = math.copysign(1.0, x) < 0.0
    k = 1 if red else 0
    k = 2 - k if swap else k
    k = 4 - k if xneg else k
    sg = -1.0 if swap != xneg else 1.0
    return num, den, red, float(k), sg


@njit(**_PUBLIC)
def atan2_f64(y, x):
    _always_inline()
    num, den, red, kf, sg = _atan2_setup(y, x)
    sc = 0.25 if den > 1e300 else 1.0       # keeps num + den finite
    num = num * sc
    den = den * sc
    nh = num - den if red else num          # u = (nh + nl) / (dh + dl)
    bv = nh - num
    nl = ((num - (nh - bv)) + (-den - bv)) if red else 0.0
    dh = den + num if red else den
    bv = dh - den
    dl = ((den - (dh - bv)) + (num - bv)) if red else 0.0
    u = nh / dh
    ul = (_fma(-u, dh, nh) + nl - u * dl) / dh
    z = u * u
    p = _AT10
    p = _fma(p, z, _AT9)
    p = _fma(p, z, _AT8)
    p = _fma(p, z, _AT7)
    p = _fma(p, z, _AT6)
    p = _fma(p, z, _AT5)
    p = _fma(p, z, _AT4)
    p = _fma(p, z, _AT3)
    p = _fma(p, z, _AT2)
    p = _fma(p, z, _AT1)
    p = _fma(p, z, _AT0)
    tail = u * z * p + ul * (1.0 - z)       # atan(u + ul) = u + tail
    kh = kf * _PIO4_H                       # exact
    a = sg * u
    s = kh + a
    bv = s - kh
    e = (kh - (s - bv)) + (a - bv)
    r = math.copysign(s + (e + (sg * tail + kf * _PIO4_L)), y)
    return r if ((x == x) & (y == y)) else math.nan


@njit(**_PUBLIC)
def atan2_f32(y, x):
    _always_inline()
    num, den, red, kf, sg = _atan2_setup(np.float64(y), np.float64(x))
    u = ((num - den) if red else num) / ((den + num) if red else den)
    z = u * u
    p = _ATF5
    p = _fma(p, z, _ATF4)
    p = _fma(p, z, _ATF3)
    p = _fma(p, z, _ATF2)
    p = _fma(p, z, _ATF1)
    p = _fma(p, z, _ATF0)
    r = np.float32(math.copysign(_fma(kf, _PIO4_H, sg * _fma(u * z, p, u)), np.float64(y)))
    return r if ((x == x) & (y == y)) else np.float32(math.nan)


# --------------------------------------------------------------------------
# f32 versions
# --------------------------------------------------------------------------

_F32 = np.float32
_LOG2E_F = _F32(1.4426950408889634)
_LN2_HI_F = _F32(0.693359375)      # 8 significant bits: k * hi is exact
_LN2_LO_F = _F32(-2.12194440e-4)
_HALF_F, _ONE_F = _F32(0.5), _F32(1.0)
_EXP_MAX_F, _EXP_MIN_F = _F32(88.8), _F32(-104.0)
# exp(r) = 1 + r + r^2 (_X0 + _X1 r + ... + _X4 r^4) on |r| <= ln2/2: minimax,
# relative error 2^-28 with the coefficients rounded to f32
_X0, _X1, _X2, _X3, _X4 = (_F32(0.4999999403953552), _F32(0.1666652113199234),
                           _F32(0.04166838899254799), _F32(0.008368735201656818),
                           _F32(0.0013814560370519757))


@njit(inline="always", cache=True)
def _pow2_f32(k):
    return _bits_to_f32(np.int32((k + 127) << 23))


@njit(**_PUBLIC)
def exp_f32(x):
    """f32 exp in f32 arithmetic (16 lanes on AVX-512)."""
    _always_inline()
    xc = x if x < _EXP_MAX_F else _EXP_MAX_F
    xc = xc if xc > _EXP_MIN_F else _EXP_MIN_F
    kf = np.floor(xc * _LOG2E_F + _HALF_F)
    k = np.int32(kf)
    rh = xc - kf * _LN2_HI_F                # exact
    lo = kf * _LN2_LO_F
    r = rh - lo
    c = (rh - r) - lo                       # r + c = rh - lo
    q = _fma(_X4, r, _X3)
    q = _fma(q, r, _X2)
    q = _fma(q, r, _X1)
    q = _fma(q, r, _X0)
    t = _fma(r * r, q, c)
    em = r + t                              # 1 + r + t summed with one rounding
    eml = t - (em - r)
    p = _ONE_F + em
    p = p + (((_ONE_F - p) + em) + eml)
    k1 = k >> np.int32(1)
    y = p * _pow2_f32(k1) * _pow2_f32(k - k1)
    y = y if x < _EXP_MAX_F else np.float32(math.inf)
    return y if x == x else x


# f32 functions computed in f64 with polynomials sized for f32 (relative error
# ~2^-30 before the final rounding, so within ~0.5 ulp of the f32 result).

# expm1(r) = r + r^2 Q(r), |r| <= ln2/2; minimax, relative error 2^-31.8
_EQ0 = 0.5000000053143459
_EQ1 = 0.16666666902875857
_EQ2 = 0.041666326616526146
_EQ3 = 0.008333219876936708
_EQ4 = 0.0013943238681939437
_EQ5 = 0.00019962238107850658
_LN2 = 0.6931471805599453


@njit(inline="always", cache=True)
def _exp_light(xd):
    """(em, s) with exp(xd) = s (1 + em), s = 2^k; xd in [-160, 160] (f64)."""
    kf = np.floor(xd * _LOG2E + 0.5)
    r = xd - kf * _LN2                      # error 2^-44 at most: fine for f32
    q = _EQ5
    q = _fma(q, r, _EQ4)
    q = _fma(q, r, _EQ3)
    q = _fma(q, r, _EQ2)
    q = _fma(q, r, _EQ1)
    q = _fma(q, r, _EQ0)
    em = _fma(r * r, q, r)
    return em, _pow2(np.int64(kf))


# log(1+f) = 2s + s R(s^2); minimax, relative error 2^-37.6
_LR0 = 0.6666666564504073
_LR1 = 0.40000335293606365
_LR2 = 0.28537301524479025
_LR3 = 0.23582293042669644


@njit(inline="always", cache=True)
def _log_light(u):
    """log(u) for a normal f64 u > 0, relative error ~2^-37."""
    ib = _f64_to_bits(u) + (0x3FF0000000000000 - 0x3FE6A09E00000000)
    e = (ib >> 52) - 1023
    m = _bits_to_f64((ib & _MANT) + 0x3FE6A09E00000000)
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    q = _LR3
    q = _fma(q, z, _LR2)
    q = _fma(q, z, _LR1)
    q = _fma(q, z, _LR0)
    return _fma(float(e), _LN2, _fma(s * z, q, s + s))


@njit(**_PUBLIC)
def log_f32(x):
    _always_inline()
    xd = np.float64(x)                      # f32 denormals are normal f64
    y = _log_light(xd if xd > 0.0 else 1.0)
    y = y if x > 0 else (-math.inf if x == 0 else math.nan)
    y = y if x < math.inf else math.inf
    return np.float32(y) if x == x else x


@njit(**_PUBLIC)
def expm1_f32(x):
    _always_inline()
    xd = np.float64(x)
    xc = xd if xd < 89.5 else 89.5          # overflows in the f32 rounding
    xc = xc if xc > -105.0 else -105.0
    em, s = _exp_light(xc)
    y = np.float32(_fma(s, em, s - 1.0))    # k = 0: em exactly
    y = y if abs(x) >= np.float32(3.725290298461914e-09) else x   # |x| < 2^-28: rounds to x
    return y if x == x else x


@njit(**_PUBLIC)
def log1p_f32(x):
    _always_inline()
    xd = np.float64(x)
    u = 1.0 + xd                            # exact for |x| >= 2^-29
    y = _log_light(u if u > 0.0 else 1.0)
    y = y if xd > -1.0 else (-math.inf if xd == -1.0 else math.nan)
    y = y if xd < math.inf else math.inf
    y = np.float32(y)
    y = y if abs(x) >= np.float32(3.725290298461914e-09) else x   # |x| < 2^-28: rounds to x
    return y if x == x else x


# tanh(x) = x + x^3 P(x^2) on |x| < 0.55 for f32; minimax, relative error 2^-27.8
# with the coefficients rounded to f32
_TF0, _TF1, _TF2, _TF3, _TF4 = (_F32(-0.33333316445350647), _F32(0.13332585990428925),
                                _F32(-0.05385230854153633), _F32(0.021071679890155792),
                                _F32(-0.0062742396257817745))


@njit(inline="always", cache=True)
def _exp_f32_normal(x):
    """exp(x) in f32 for x in [-80, 80] (normal results: one scaling step)."""
    kf = np.floor(x * _LOG2E_F + _HALF_F)
    r = (x - kf * _LN2_HI_F) - kf * _LN2_LO_F
    q = _fma(_X4, r, _X3)
    q = _fma(q, r, _X2)
    q = _fma(q, r, _X1)
    q = _fma(q, r, _X0)
    return (_ONE_F + _fma(r * r, q, r)) * _pow2_f32(np.int32(kf))


@njit(**_PUBLIC)
def tanh_f32(x):
    """In f32 arithmetic (16 lanes): within 1.5 ulp."""
    _always_inline()
    a = abs(x)
    z = x * x
    p = _fma(_TF4, z, _TF3)
    p = _fma(p, z, _TF2)
    p = _fma(p, z, _TF1)
    p = _fma(p, z, _TF0)
    small = _fma(x * z, p, x)
    small = x if a < _F32(2.44140625e-04) else small    # |x| < 2^-12: rounds to x (-0.0 too)
    ac = a if a < _F32(9.5) else _F32(9.5)          # tanh rounds to 1 beyond 9.01
    big = _ONE_F - _F32(2.0) / (_exp_f32_normal(ac + ac) + _ONE_F)
    y = small if a < _F32(0.55) else np.float32(math.copysign(big, x))
    return y if x == x else x


@njit(**_PUBLIC)
def logistic_f32(x):
    _always_inline()
    xd = np.float64(x)
    xc = -abs(xd)
    xc = xc if xc > -110.0 else -110.0
    em, s = _exp_light(xc)
    e = s + s * em                          # exp(-|x|) in f64
    y = np.float32((1.0 if xd >= 0.0 else e) / (1.0 + e))
    y = y if xd >= _LOGISTIC_ZERO_F32 else _F32(0.0)
    return y if x == x else x


@njit(**_PUBLIC)
def logistic_f16(x):
    """logistic_f32 of an f16 value (an f32), 0 where exp(-x) overflows in f16
    (x <= -11.09375): XLA rounds the exp of its expansion to f16."""
    _always_inline()
    y = logistic_f32(x)
    return _F32(0.0) if x < _F32(-11.0859375) else y


# sin/cos on |r| <= pi/4 for f32: sin r = r + r^3 S(r^2), cos r = 1 + r^2 C(r^2);
# minimax, relative errors 2^-37.5 and 2^-33.9
_SF0 = -0.16666666640692834
_SF1 = 0.008333329292701933
_SF2 = -0.00019839308346427726
_SF3 = 2.7180840684103494e-06
_CF0 = -0.4999999969322022
_CF1 = 0.04166662021519897
_CF2 = -0.001388667716074965
_CF3 = 2.4383144750423606e-05
_Q1 = 1.570796251296997             # pi/2 in 24 + 24 + 53 bits: k * Q1, k * Q2 exact
_Q2 = 7.549789415861596e-08         # for k < 2^29
_Q3 = 5.390302858158119e-15
TRIG_BOUND_F32 = 536870912.0        # 2^29: the f32 reduction below is exact


@njit(**_PUBLIC)
def trig_needs_libm_f32(x):
    """True where the *_f32_reduced functions do not apply (finite |x| > bound)."""
    _always_inline()
    return (abs(x) > TRIG_BOUND_F32) & (abs(x) < math.inf)


@njit(inline="always", cache=True)
def _sincos_f32(x):
    """(n, sin r, cos r) in f64 with x = n pi/2 + r, for f32 |x| <= TRIG_BOUND_F32."""
    xd = np.float64(x)
    xd = xd if abs(xd) <= TRIG_BOUND_F32 else 0.0
    kf = np.floor(xd * _INV_PIO2 + 0.5)
    r = ((xd - kf * _Q1) - kf * _Q2) - kf * _Q3     # the first two steps are exact
    z = r * r
    p = _SF3
    p = _fma(p, z, _SF2)
    p = _fma(p, z, _SF1)
    p = _fma(p, z, _SF0)
    sn = _fma(r * z, p, r)
    q = _CF3
    q = _fma(q, z, _CF2)
    q = _fma(q, z, _CF1)
    q = _fma(q, z, _CF0)
    cs = _fma(z, q, 1.0)
    return np.int64(kf), sn, cs


@njit(**_PUBLIC)
def sin_f32_reduced(x):
    _always_inline()
    n, sn, cs = _sincos_f32(x)
    v = cs if n & 1 else sn
    v = -v if n & 2 else v
    y = np.float32(v)
    y = y if abs(x) >= np.float32(2.44140625e-04) else x     # |x| < 2^-12: sin x rounds to x
    return y if abs(x) <= TRIG_BOUND_F32 else np.float32(math.nan)


@njit(**_PUBLIC)
def cos_f32_reduced(x):
    _always_inline()
    n, sn, cs = _sincos_f32(x)
    v = sn if n & 1 else cs
    v = -v if (n + 1) & 2 else v
    y = np.float32(v)
    return y if abs(x) <= TRIG_BOUND_F32 else np.float32(math.nan)


@njit(**_PUBLIC)
def tan_f32_reduced(x):
    _always_inline()
    n, sn, cs = _sincos_f32(x)
    odd = (n & 1) != 0
    y = np.float32((-cs if odd else sn) / (sn if odd else cs))
    y = y if abs(x) >= np.float32(2.44140625e-04) else x     # |x| < 2^-12: tan x rounds to x
    return y if abs(x) <= TRIG_BOUND_F32 else np.float32(math.nan)


@njit(**_PUBLIC)
def sin_f32(x):
    _always_inline()
    if abs(x) > TRIG_BOUND_F32:
        return np.float32(math.sin(np.float64(x)))
    return sin_f32_reduced(x)


@njit(**_PUBLIC)
def cos_f32(x):
    _always_inline()
    if abs(x) > TRIG_BOUND_F32:
        return np.float32(math.cos(np.float64(x)))
    return cos_f32_reduced(x)


@njit(**_PUBLIC)
def tan_f32(x):
    _always_inline()
    if abs(x) > TRIG_BOUND_F32:
        return np.float32(math.tan(np.float64(x)))
    return tan_f32_reduced(x)


# erf for f32 (in f64): |x| < 1.5: x P(x^2), relative error 2^-30.6;
# 1.5 <= |x| < 4: polynomial in |x| - 2.75, absolute error 2^-30; 1 beyond
_EFA = (1.1283791664062042, -0.3761263382369046, 0.11283730000288245, -0.026863279438340198,
        0.005217149008045782, -0.0008456801062351345, 0.00011321072938421539,
        -1.1359996911675683e-05, 6.240408942715826e-07)
_EFB = (0.99989937721897, 0.0005862729125902205, -0.0016122052779303567,
        0.0027604843214478025, -0.003258736312878277, 0.0027551996047491447,
        -0.0016547601969219934, 0.0006477400920928148, -9.414825784180727e-05,
        -7.362082006865093e-05, 6.0477391072512255e-05, -1.410556684813157e-05,
        -4.226512731299388e-06, 2.136783757913881e-06)
_EFA0, _EFA1, _EFA2, _EFA3, _EFA4, _EFA5, _EFA6, _EFA7, _EFA8 = _EFA
(_EFB0, _EFB1, _EFB2, _EFB3, _EFB4, _EFB5, _EFB6, _EFB7, _EFB8, _EFB9, _EFB10, _EFB11, _EFB12,
 _EFB13) = _EFB


@njit(**_PUBLIC)
def erf_f32(x):
    _always_inline()
    xd = np.float64(x)
    a = abs(xd)
    z = xd * xd
    p = _EFA8
    p = _fma(p, z, _EFA7)
    p = _fma(p, z, _EFA6)
    p = _fma(p, z, _EFA5)
    p = _fma(p, z, _EFA4)
    p = _fma(p, z, _EFA3)
    p = _fma(p, z, _EFA2)
    p = _fma(p, z, _EFA1)
    p = _fma(p, z, _EFA0)
    ya = xd * p                             # keeps -0.0
    u = a if a < 4.0 else 4.0
    u = (u if u > 1.5 else 1.5) - 2.75
    q = _EFB13
    q = _fma(q, u, _EFB12)
    q = _fma(q, u, _EFB11)
    q = _fma(q, u, _EFB10)
    q = _fma(q, u, _EFB9)
    q = _fma(q, u, _EFB8)
    q = _fma(q, u, _EFB7)
    q = _fma(q, u, _EFB6)
    q = _fma(q, u, _EFB5)
    q = _fma(q, u, _EFB4)
    q = _fma(q, u, _EFB3)
    q = _fma(q, u, _EFB2)
    q = _fma(q, u, _EFB1)
    q = _fma(q, u, _EFB0)
    q = q if a < 4.0 else 1.0
    y = ya if a < 1.5 else math.copysign(q, xd)
    return np.float32(y) if x == x else x


@njit(**_PUBLIC)
def cbrt_f32(x):
    _always_inline()
    xd = np.float64(x)                      # f32 denormals are normal f64
    a = abs(xd)
    bits = _f64_to_bits(a)
    e = (bits >> 52) - 1023
    q = np.int64(np.floor((float(e) + 0.5) * _THIRD))     # floor(e / 3)
    rem = e - 3 * q
    mant = _bits_to_f64((bits & _MANT) | 0x3FF0000000000000)
    m = mant * 4.0 if rem == 2 else (mant * 2.0 if rem == 1 else mant)
    y = _fma(_fma(_CB2, mant, _CB1), mant, _CB0)
    y = y * (_CBRT4_INV if rem == 2 else (_CBRT2_INV if rem == 1 else 1.0))
    y = y + y * (1.0 - m * (y * y * y)) * _THIRD
    y = y + y * (1.0 - m * (y * y * y)) * _THIRD          # 2^-33
    r = np.float32(math.copysign(m * (y * y) * _pow2(q), xd))
    return r if ((x != 0) & (abs(x) < np.float32(math.inf))) else x


@njit(**_PUBLIC)
def pow_f32(x, y):
    _always_inline()
    xd = np.float64(x)
    yd = np.float64(y)
    ax = abs(xd)
    t = yd * _log_light(ax if ((ax > 0.0) & (ax < math.inf)) else 1.0)
    t = t if t < 160.0 else 160.0
    t = t if t > -160.0 else -160.0
    em, s = _exp_light(t)
    return np.float32(_pow_special(xd, yd, s + s * em))
