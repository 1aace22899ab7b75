"""16-bit floats in compiled kernels.

Numba has no f16 arithmetic and NumPy no bf16, so buffers of both types
hold uint16 words and kernels compute in f32, rounding once per stored
result (as XLA:CPU does).  These scalar conversions are branch-light
integer code that LLVM can vectorise; they round to nearest even, keep NaN
a NaN, and keep denormals (no flush to zero).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["f16_to_f32", "f32_to_f16", "bf16_to_f32", "f32_to_bf16"]


@intrinsic
def _u32_to_f32(typingctx, bits):
    sig = types.float32(types.uint32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return sig, codegen


@intrinsic
def _f32_to_u32(typingctx, value):
    sig = types.uint32(types.float32)

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return sig, codegen


@njit(cache=True)
def bf16_to_f32(word):
    return _u32_to_f32(np.uint32(word) << np.uint32(16))


@njit(cache=True)
def f32_to_bf16(x):
    bits = _f32_to_u32(np.float32(x))
    nan = (bits & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    quiet = (bits >> np.uint32(16)) | np.uint32(0x40)
    return np.uint16(quiet if nan else rounded)


@njit(cache=True)
def f16_to_f32(word):
    h = np.uint32(word)
    sign = (h & np.uint32(0x8000)) << np.uint32(16)
    exponent = (h >> np.uint32(10)) & np.uint32(0x1F)
    mantissa = h & np.uint32(0x3FF)
    normal = sign | ((exponent + np.uint32(112)) << np.uint32(23)) | (mantissa << np.uint32(13))
    special = sign | np.uint32(0x7F800000) | (mantissa << np.uint32(13))  # inf, nan
    # denormals (and zero): mantissa * 2**-24, exact in f32
    tiny = np.float32(mantissa) * np.float32(5.9604644775390625e-08)
    tiny = -tiny if sign else tiny
    value = _u32_to_f32(special if exponent == np.uint32(31) else normal)
    return tiny if exponent == np.uint32(0) else value


@njit(cache=True)
def f32_to_f16(x):
    bits = _f32_to_u32(np.float32(x))
    sign = (bits >> np.uint32(16)) & np.uint32(0x8000)
    magnitude = bits & np.uint32(0x7FFFFFFF)
    # normal range: rebias the exponent and round the mantissa to nearest even
    odd = (magnitude >> np.uint32(13)) & np.uint32(1)
    normal = (magnitude + np.uint32(0xFFF) + odd - np.uint32(0x38000000)) >> np.uint32(13)
    # denormal range (|x| < 2**-14): round |x| * 2**24 to an integer, ties to even
    scaled = np.float32(np.abs(np.float32(x))) * np.float32(16777216.0)
    denormal = np.uint32(np.rint(scaled)) if magnitude < np.uint32(0x38800000) else np.uint32(0)
    out = normal
    out = denormal if magnitude < np.uint32(0x38800000) else out
    out = np.uint32(0x7C00) if magnitude >= np.uint32(0x477FF000) else out  # rounds to inf
    out = (np.uint32(0x7E00) | ((magnitude >> np.uint32(13)) & np.uint32(0x3FF))) \
        if magnitude > np.uint32(0x7F800000) else out                     # nan stays nan
    return np.uint16(sign | out)
