"""BLAS products on strided matrices inside 1-D buffers.

:func:`dot_blas` multiplies matrices that sit in 1-D buffers at any offset and
with any element strides: each one is passed to BLAS ``xgemm`` (or ``xgemv``
for a matrix-vector product) as it is, column- or row-major with its leading
dimension, so that no operand or result has to be copied into a scratch
matrix first.  BLAS is SciPy's (``scipy.linalg.cython_blas``), reached through
the ``numba_xxgemm`` and ``numba_xxgemv`` wrappers of Numba's helper library,
which ``np.dot`` inside Numba uses too: calls name the symbol, so compiled
functions stay cacheable on disk.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload
from numba.np.arrayobj import make_array
from numba.np.linalg import ensure_blas, get_blas_kind

from .scalar import complex_mul

__all__ = ["dot_blas", "dot_blas_call", "dot_blas_loops", "dot_blas_f32", "dot_blas_f64", "dot_blas_c64",
           "dot_blas_c128"]

_BLAS_TYPES = (types.float32, types.float64, types.complex64, types.complex128)
_INT_MAX = 2 ** 31 - 1  # BLAS sizes and leading dimensions are C ints


def _pointer(context, builder, aty, aval, offty, off):
    """``&a[off]`` as ``i8*``."""
    arr = make_array(aty)(context, builder, aval)
    off = context.cast(builder, off, offty, types.intp)
    return builder.bitcast(builder.gep(arr.data, [off]), cgutils.voidptr_t)


def _char(context, builder, ty, val):
    """An integer argument as a C ``char``."""
    return builder.trunc(context.cast(builder, val, ty, types.intp), ir.IntType(8))


def _scalar_slot(context, builder, ty, val, dtype):
    """A stack slot holding ``val`` converted to ``dtype``, as ``i8*``."""
    slot = cgutils.alloca_once_value(builder, context.cast(builder, val, ty, dtype))
    return builder.bitcast(slot, cgutils.voidptr_t)


@intrinsic
def _xgemm(typingctx, transa, transb, m, n, k, a, ao, lda, b, bo, ldb, beta, c, co, ldc):
    """BLAS ``c[co:] = a[ao:] @ b[bo:] + beta * c[co:]`` (column-major, Fortran
    conventions: ``transa``/``transb`` are ``ord('N')`` or ``ord('T')``).
    Returns 0, or -1 when BLAS is unavailable."""
    arrays = (a, b, c)
    if not all(isinstance(x, types.Array) for x in arrays) or c.dtype not in _BLAS_TYPES or \
            a.dtype != c.dtype or b.dtype != c.dtype:
        return None
    dtype = c.dtype
    sig = types.int32(transa, transb, m, n, k, a, ao, lda, b, bo, ldb, beta, c, co, ldc)

    def codegen(context, builder, sig, args):
        ensure_blas()
        t = sig.args
        intp = context.get_value_type(types.intp)
        vp = cgutils.voidptr_t
        i8 = ir.IntType(8)
        fnty = ir.FunctionType(ir.IntType(32), [i8, i8, i8, intp, intp, intp, vp, vp, intp, vp,
                                                intp, vp, vp, intp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")
        size = [context.cast(builder, args[i], t[i], types.intp) for i in (2, 3, 4, 7, 10, 14)]
        alpha = _scalar_slot(context, builder, types.float64,
                             context.get_constant(types.float64, 1.0), dtype)
        return builder.call(fn, [
            ir.Constant(i8, ord(get_blas_kind(dtype))),
            _char(context, builder, t[0], args[0]), _char(context, builder, t[1], args[1]),
            size[0], size[1], size[2], alpha,
            _pointer(context, builder, t[5], args[5], t[6], args[6]), size[3],
            _pointer(context, builder, t[8], args[8], t[9], args[9]), size[4],
            _scalar_slot(context, builder, t[11], args[11], dtype),
            _pointer(context, builder, t[12], args[12], t[13], args[13]), size[5]])
    return sig, codegen


@intrinsic
def _xgemv(typingctx, trans, m, n, a, ao, lda, x, xo, beta, y, yo):
    """BLAS ``y[yo:] = op(a[ao:]) @ x[xo:] + beta * y[yo:]`` with unit increments
    (``a`` column-major ``m x n``).  Returns 0, or -1 when BLAS is unavailable."""
    if not all(isinstance(v, types.Array) for v in (a, x, y)) or y.dtype not in _BLAS_TYPES or \
            a.dtype != y.dtype or x.dtype != y.dtype:
        return None
    dtype = y.dtype
    sig = types.int32(trans, m, n, a, ao, lda, x, xo, beta, y, yo)

    def codegen(context, builder, sig, args):
        ensure_blas()
        t = sig.args
        intp = context.get_value_type(types.intp)
        vp = cgutils.voidptr_t
        i8 = ir.IntType(8)
        fnty = ir.FunctionType(ir.IntType(32), [i8, i8, intp, intp, vp, vp, intp, vp, vp, vp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemv")
        size = [context.cast(builder, args[i], t[i], types.intp) for i in (1, 2, 5)]
        alpha = _scalar_slot(context, builder, types.float64,
                             context.get_constant(types.float64, 1.0), dtype)
        return builder.call(fn, [
            ir.Constant(i8, ord(get_blas_kind(dtype))), _char(context, builder, t[0], args[0]),
            size[0], size[1], alpha,
            _pointer(context, builder, t[3], args[3], t[4], args[4]), size[2],
            _pointer(context, builder, t[6], args[6], t[7], args[7]),
            _scalar_slot(context, builder, t[8], args[8], dtype),
            _pointer(context, builder, t[9], args[9], t[10], args[10])])
    return sig, codegen


@njit(cache=True, nogil=True, inline="always")
def _col_major_ld(r, c, sr, sc):
    """The leading dimension of an ``r x c`` matrix with element strides
    ``(sr, sc)`` read as a column-major BLAS matrix, or 0 when it is not one."""
    if r != 1 and sr != 1:
        return 0
    if c == 1:
        return max(r, 1)
    return sc if sc >= max(r, 1) else 0


@njit(cache=True, nogil=True, inline="always")
def _last(o, r, c, sr, sc):
    """The buffer position of the last element of a strided ``r x c`` matrix."""
    return o + (r - 1) * sr + (c - 1) * sc


@njit(cache=True, nogil=True)
def _dot_loop(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, beta):
    for i in range(m):
        for j in range(n):
            ci = co + i * crs + j * ccs
            s = c[ci] * beta if beta != 0 else c.dtype.type(0)
            for p in range(k):
                s += a[ao + i * ars + p * acs] * b[bo + p * brs + j * bcs]
            c[ci] = s


# Complex products: BLAS's kernels (which multiply by alpha = 1 + 0i at the
# end) turn an infinite or overflowing product into NaN + NaN i, where XLA's
# product (``scalar.complex_mul``) keeps e.g. NaN - inf i.  A non-finite element
# of a complex C is therefore computed again: the products summed in order.

def _kept(c, co, crs, ccs, m, n, beta):
    """The elements of C before a product accumulates into it (``beta`` 1), for
    :func:`_redo_non_finite`: complex C only (else, and for beta 0, empty)."""


@overload(_kept)
def _kept_impl(c, co, crs, ccs, m, n, beta):
    if not isinstance(c.dtype, types.Complex):
        return lambda c, co, crs, ccs, m, n, beta: np.empty(0, c.dtype)

    def impl(c, co, crs, ccs, m, n, beta):
        if beta == 0:
            return np.empty(0, c.dtype)
        out = np.empty(m * n, c.dtype)
        for i in range(m):
            for j in range(n):
                out[i * n + j] = c[co + i * crs + j * ccs]
        return out
    return impl


def _redo_non_finite(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, kept):
    """Each element of a complex C that is infinite or NaN in either part:
    ``kept + sum_p A[i, p] * B[p, j]`` again, with XLA's product, in order of p."""


@overload(_redo_non_finite)
def _redo_non_finite_impl(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, kept):
    if not isinstance(c.dtype, types.Complex):
        return lambda a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, kept: None

    def impl(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, kept):
        T = c.dtype.type
        for i in range(m):
            for j in range(n):
                ci = co + i * crs + j * ccs
                v = c[ci]
                if abs(v.real) < np.inf and abs(v.imag) < np.inf:
                    continue
                s = kept[i * n + j] if kept.size else T(0)
                for p in range(k):
                    s += T(complex_mul(a[ao + i * ars + p * acs], b[bo + p * brs + j * bcs]))
                c[ci] = s
    return impl


@njit(cache=True, nogil=True)
def dot_blas(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, beta):
    """``C = A @ B + beta * C`` for strided matrices in 1-D buffers (float or
    complex, one type): ``A[i, p] = a[ao + i * ars + p * acs]`` (``m x k``),
    ``B[p, j] = b[bo + p * brs + j * bcs]`` (``k x n``), ``C[i, j] = c[co + i *
    crs + j * ccs]`` (``m x n``); strides are >= 0.  ``beta`` is 0 (C is only
    written) or 1 (C accumulates).  Each matrix goes to BLAS as it is when one of
    its strides is 1 (a matrix-vector product to gemv when its vectors are
    contiguous); other strides take a plain loop.  Complex elements that come
    out infinite or NaN are summed again with XLA's product
    (:func:`_redo_non_finite`).  Raises IndexError rather than touch anything
    outside the buffers."""
    if m <= 0 or n <= 0:
        return
    if k <= 0:
        for i in range(m):
            for j in range(n):
                c[co + i * crs + j * ccs] = c[co + i * crs + j * ccs] * beta if beta != 0 else 0
        return
    if min(ao, bo, co, ars, acs, brs, bcs, crs, ccs) < 0 or \
            _last(ao, m, k, ars, acs) >= a.size or _last(bo, k, n, brs, bcs) >= b.size or \
            _last(co, m, n, crs, ccs) >= c.size:
        raise IndexError("dot_blas: a matrix lies outside its buffer")
    kept = _kept(c, co, crs, ccs, m, n, beta)
    if max(m, n, k) > _INT_MAX:
        _dot_loop(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, beta)
        _redo_non_finite(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, kept)
        return
    N, T = 78, 84  # ord('N'), ord('T')
    res = 1
    if n == 1 and (m == 1 or crs == 1) and (k == 1 or brs == 1):
        # c[:, 0] = A @ b[:, 0]
        lda = _col_major_ld(m, k, ars, acs)
        if 0 < lda <= _INT_MAX:
            res = _xgemv(N, m, k, a, ao, lda, b, bo, beta, c, co)
        else:
            lda = _col_major_ld(k, m, acs, ars)
            if 0 < lda <= _INT_MAX:
                res = _xgemv(T, k, m, a, ao, lda, b, bo, beta, c, co)
    elif m == 1 and (n == 1 or ccs == 1) and (k == 1 or acs == 1):
        # c[0, :] = B^T @ a[0, :]
        ldb = _col_major_ld(k, n, brs, bcs)
        if 0 < ldb <= _INT_MAX:
            res = _xgemv(T, k, n, b, bo, ldb, a, ao, beta, c, co)
        else:
            ldb = _col_major_ld(n, k, bcs, brs)
            if 0 < ldb <= _INT_MAX:
                res = _xgemv(N, n, k, b, bo, ldb, a, ao, beta, c, co)
    if res == 1:
        ldc = _col_major_ld(m, n, crs, ccs)
        if 0 < ldc <= _INT_MAX:  # C = op(A) op(B), column-major
            lda, ta = _col_major_ld(m, k, ars, acs), N
            if lda == 0:
                lda, ta = _col_major_ld(k, m, acs, ars), T
            ldb, tb = _col_major_ld(k, n, brs, bcs), N
            if ldb == 0:
                ldb, tb = _col_major_ld(n, k, bcs, brs), T
            if 0 < lda <= _INT_MAX and 0 < ldb <= _INT_MAX:
                res = _xgemm(ta, tb, m, n, k, a, ao, lda, b, bo, ldb, beta, c, co, ldc)
        else:
            ldc = _col_major_ld(n, m, ccs, crs)
            if 0 < ldc <= _INT_MAX:  # C^T = op(B^T) op(A^T), column-major
                ldb, tb = _col_major_ld(n, k, bcs, brs), N
                if ldb == 0:
                    ldb, tb = _col_major_ld(k, n, brs, bcs), T
                lda, ta = _col_major_ld(k, m, acs, ars), N
                if lda == 0:
                    lda, ta = _col_major_ld(m, k, ars, acs), T
                if 0 < lda <= _INT_MAX and 0 < ldb <= _INT_MAX:
                    res = _xgemm(tb, ta, n, m, k, b, bo, ldb, a, ao, lda, beta, c, co, ldc)
    if res == 1:
        _dot_loop(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, beta)
    elif res != 0:
        raise RuntimeError("dot_blas: BLAS (scipy.linalg.cython_blas) is unavailable")
    _redo_non_finite(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, kept)


@njit(cache=True, nogil=True)
def dot_blas_call(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, beta):
    """:func:`dot_blas` as its own cached function, whose on-disk index holds
    only the entry signatures (quick to load): the code behind the symbol of
    :func:`_dot_entry`, and what a program calls directly for one product of
    buffers BLAS takes as they are (a library call)."""
    dot_blas(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k, beta)


# Loops around one product that :func:`dot_blas_loops` takes (size-1 loops pad them).
DOT_LOOPS = 4


def dot_loops_geometry(loops, a_strides, b_strides, c_strides, mnk) -> np.ndarray | None:
    """:func:`dot_blas_loops`' geometry for ``loops`` (``(size, a step, b step,
    c step, over_k)``, outermost first), the matrices' (row, column) strides
    and the product's m, n, k; None beyond :data:`DOT_LOOPS` loops."""
    if len(loops) > DOT_LOOPS:
        return None
    rows = [(1, 0, 0, 0, 0)] * (DOT_LOOPS - len(loops)) + [
        (size, sa, sb, sc, int(over_k)) for size, sa, sb, sc, over_k in loops]
    return np.array([v for row in rows for v in row] + [*a_strides, *b_strides, *c_strides, *mnk],
                    np.int64)


@njit(cache=True, nogil=True)
def dot_blas_loops(a, b, c, geometry):
    """:func:`dot_blas` inside up to :data:`DOT_LOOPS` loops (a batched
    product, or M, N, K dimensions whose strides do not fold into one), the
    geometry at run time (:func:`dot_loops_geometry`): each step offsets the
    three matrices, and the product accumulates once a loop over K has
    moved on.  What a program calls for such a product of buffers BLAS takes
    as they are, instead of a generated kernel per shape."""
    g = geometry[:5 * DOT_LOOPS].reshape((DOT_LOOPS, 5))
    s = geometry[5 * DOT_LOOPS:]
    ars, acs, brs, bcs, crs, ccs, m, n, k = s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8]
    for i0 in range(g[0, 0]):
        for i1 in range(g[1, 0]):
            for i2 in range(g[2, 0]):
                for i3 in range(g[3, 0]):
                    ao = i0 * g[0, 1] + i1 * g[1, 1] + i2 * g[2, 1] + i3 * g[3, 1]
                    bo = i0 * g[0, 2] + i1 * g[1, 2] + i2 * g[2, 2] + i3 * g[3, 2]
                    co = i0 * g[0, 3] + i1 * g[1, 3] + i2 * g[2, 3] + i3 * g[3, 3]
                    over_k = i0 * g[0, 4] + i1 * g[1, 4] + i2 * g[2, 4] + i3 * g[3, 4]
                    dot_blas(a, ao, ars, acs, b, bo, brs, bcs, c, co, crs, ccs, m, n, k,
                             0.0 if over_k == 0 else 1.0)


def _dot_entry(suffix: str, dtype):
    """:func:`dot_blas` for C-contiguous ``dtype`` buffers, int64 offsets, strides
    and sizes and a float64 ``beta``, called through a symbol
    (:mod:`compile.extern`): generated code calls this rather than linking its
    own copy of :func:`dot_blas`."""
    from ..extern import Entry
    arr, i = types.Array(dtype, 1, "C"), types.int64
    sig = (arr, i, i, i, arr, i, i, i, arr, i, i, i, i, i, i, types.float64)
    return Entry(f"dot_blas_{suffix}", dot_blas_call, sig, outputs=(8,)).make_intrinsic()


dot_blas_f32 = _dot_entry("f32", types.float32)
dot_blas_f64 = _dot_entry("f64", types.float64)
dot_blas_c64 = _dot_entry("c64", types.complex64)
dot_blas_c128 = _dot_entry("c128", types.complex128)
