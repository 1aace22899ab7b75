"""``numpy.linalg``'s spectral functions (re-exported by ``linalg``): ``eigh``
and ``eigvalsh`` on Jacobi ``eigh``; ``svd``, ``svdvals``, ``pinv``,
``lstsq`` and ``matrix_rank`` on the one-sided Jacobi SVD (see
``_decompositions``); real and complex matrices alike (complex Jacobi
rotations).  Derivatives are those of the loops (exact once they have
converged), so for distinct eigenvalues (singular values) every quantity free
of the vectors' phases (signs) has the tangent of JAX's rules; a complex
eigenvector's own tangent may differ from JAX's by a multiple ``i theta v``
of itself (the derivative of this algorithm's phase choice, where JAX's rule
takes none).
"""
from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any

import numpy as np

from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from . import _decompositions as dec
from ._core import _arraylike, _broadcast_all, _to_inexact, broadcast_to, matmul, reshape, \
    sum as _sum, true_divide, where
from ._gather_indexing import take_along_axis
from ._math import conj, sign
from ._reductions import any as _any, argsort, max as _max
from ._shaping import diagonal
from .._util import dims as _dims, element_type as _type

__all__ = ["eigh", "eigvalsh", "svd", "svdvals", "pinv", "lstsq", "matrix_rank"]

EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
SVDResult = namedtuple("SVDResult", "U S Vh")




def _eps(t: PT) -> float:
    real = {PT.C64: PT.F32, PT.C128: PT.F64}.get(t, t)
    return float(np.finfo(real.numpy_dtype).eps) if t is not PT.BF16 else 2.0 ** -7


def _matrices(fn: str, a: Any, square: bool = True) -> Any:
    """``a`` as an inexact array of (a batch of) matrices."""
    a = _to_inexact(_arraylike(a))
    dims = _dims(a)
    if len(dims) < 2:
        raise ValueError(f"{fn}: the input must have at least two dimensions, got shape {dims}")
    if square and dims[-1] != dims[-2]:
        raise ValueError(f"{fn}: the last two dimensions must be square, got shape {dims}")
    return a


def _diag(x: Any) -> Any:
    return diagonal(x, 0, -2, -1)


def _symmetrized(a: Any) -> Any:
    return ew.mul(ew.add(a, dec.mH(a)), ew.convert_element_type(0.5, _type(a)))


def _hermitian_input(a: Any, UPLO: str | None, symmetrize_input: bool) -> Any:
    if symmetrize_input:
        return _symmetrized(a)
    from ._creation import tril, triu
    lower = (UPLO or "L").upper() == "L"
    tri = tril(a) if lower else triu(a)
    strict = tril(a, -1) if lower else triu(a, 1)
    return ew.add(tri, dec.mH(strict))


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> Any:
    """``(eigenvalues, eigenvectors)`` of each real symmetric or complex
    Hermitian matrix, eigenvalues (real) ascending, eigenvectors as columns
    (Jacobi; ``symmetrize_input`` averages ``a`` with its conjugate transpose,
    else the ``UPLO`` triangle is used)."""
    a = _hermitian_input(_matrices("eigh", a), UPLO, symmetrize_input)
    w, v = dec.jacobi_eigh(a)
    order = argsort(w, -1)
    w = take_along_axis(w, order, -1)
    v = take_along_axis(v, broadcast_to(lax.expand_dims(order, (len(_dims(order)) - 1,)),
                                        _dims(v)), -1)
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:
    """The eigenvalues (real, ascending) of each real symmetric or complex
    Hermitian matrix."""
    a = _hermitian_input(_matrices("eigvalsh", a), UPLO, symmetrize_input)
    return eigh(a, UPLO, False).eigenvalues


def _sorted_svd(a: Any) -> tuple[Any, Any, Any]:
    """``(u_sigma, sigma, v)`` of a tall or square ``a``, sigma descending."""
    u_sigma, sigma, v = dec.jacobi_svd(a)
    order = argsort(ew.neg(sigma), -1)
    sigma = take_along_axis(sigma, order, -1)
    columns = lax.expand_dims(order, (len(_dims(order)) - 1,))
    u_sigma = take_along_axis(u_sigma, broadcast_to(columns, _dims(u_sigma)), -1)
    v = take_along_axis(v, broadcast_to(columns, _dims(v)), -1)
    return u_sigma, sigma, v


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: Any = None) -> Any:
    """``(U, S, Vh)`` with ``a = U @ diag(S) @ Vh``, ``S`` (real) descending
    (one-sided Jacobi on the matrix or its conjugate transpose; ``U`` from a QR
    of ``a V``, its columns' phases from ``R``'s diagonal, so it is unitary even
    for zero singular values)."""
    if subset_by_index is not None:
        raise NotImplementedError("svd: subset_by_index is not supported")
    a = _matrices("svd", a, square=False)
    m, n = _dims(a)[-2:]
    if m < n:
        out = svd(dec.mH(a), full_matrices, compute_uv)
        return out if not compute_uv else SVDResult(dec.mH(out.Vh), out.S, dec.mH(out.U))
    u_sigma, sigma, v = _sorted_svd(a)
    if not compute_uv:
        return sigma
    q, r = dec.householder_qr(u_sigma, full=full_matrices)
    signs = sign(_diag(lax.slice_in_dim(r, 0, n, 1, len(_dims(r)) - 2)))
    signs = where(ew.eq(signs, ew.convert_element_type(0, _type(signs))),
                  ew.convert_element_type(1, _type(signs)), signs)
    k = _dims(q)[-1]
    if k > n:
        signs = lax.pad(signs, ew.convert_element_type(1, _type(signs)),
                        [(0, 0, 0)] * (len(_dims(signs)) - 1) + [(0, k - n, 0)])
    u = ew.mul(q, broadcast_to(lax.expand_dims(signs, (len(_dims(signs)) - 1,)), _dims(q)))
    return SVDResult(u, sigma, dec.mH(v))


def svdvals(x: Any, /) -> Any:
    """The singular values, descending."""
    return svd(x, compute_uv=False)


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverse: singular values at most ``rtol`` times the
    largest count as zero (default ``max(M, N) * eps``)."""
    a = _matrices("pinv", a, square=False)
    m, n = _dims(a)[-2:]
    rtol = rcond if rtol is None else rtol
    if rtol is None:
        rtol = builtins.max(m, n) * _eps(_type(a))
    u, s, vh = svd(a, full_matrices=False)
    cutoff = ew.mul(_max(s, -1, keepdims=True), ew.convert_element_type(_arraylike(rtol), _type(s)))
    keep = ew.gt(s, broadcast_to(cutoff, _dims(s)))
    s_inv = where(keep, true_divide(ew.convert_element_type(1, _type(s)),
                                    where(keep, s, ew.convert_element_type(1, _type(s)))),
                  ew.convert_element_type(0, _type(s)))
    scaled = ew.mul(dec.mH(vh), broadcast_to(lax.expand_dims(s_inv, (len(_dims(s_inv)) - 1,)),
                                            _dims(dec.mH(vh))))
    return matmul(scaled, dec.mH(u))


def lstsq(a: Any, b: Any, rcond: Any = None, *, numpy_resid: bool = False) -> tuple:
    """``(x, residuals, rank, s)``: the least-squares solution of ``a @ x = b`` by
    SVD (singular values at most ``rcond`` times the largest are dropped;
    default ``eps * max(M, N)``); the residuals are always computed (JAX's)."""
    a = _matrices("lstsq", a, square=False)
    b = _arraylike(b)
    a, b = ew.promote(a, _to_inexact(b))
    if abstractify(a).ndim != 2:
        raise ValueError("lstsq: a must be a 2-D matrix")
    m, n = _dims(a)
    vector = abstractify(b).ndim == 1
    b2 = reshape(b, (m, 1)) if vector else b
    if rcond is None:
        rcond = _eps(_type(a)) * builtins.max(m, n)
    u, s, vh = svd(a, full_matrices=False)
    cutoff = ew.mul(_max(s), ew.convert_element_type(_arraylike(rcond), _type(s))) if \
        _dims(s)[0] else ew.convert_element_type(0, _type(s))
    keep = ew.gt(s, cutoff)
    rank = _sum(keep, dtype=PT.S32)
    safe = where(keep, s, ew.convert_element_type(1, _type(s)))
    ub = matmul(dec.mH(u), b2)
    coef = where(reshape(keep, (-1, 1)), true_divide(ub, reshape(safe, (-1, 1))),
                 ew.convert_element_type(0, _type(ub)))
    x = matmul(dec.mH(vh), coef)
    resid = _sum(ew.real(ew.mul(conj(ew.sub(b2, matmul(a, x))), ew.sub(b2, matmul(a, x))))
                 if _type(a).is_complex else ew.mul(ew.sub(b2, matmul(a, x)),
                                                    ew.sub(b2, matmul(a, x))), 0)
    if numpy_resid and (m <= n):
        resid = broadcast_to(ew.convert_element_type(0, _type(resid)), (0,))
    return (reshape(x, (n,)) if vector else x), resid, rank, s


def matrix_rank(M: Any, rtol: Any = None, *, tol: Any = None) -> Any:
    """The number of singular values above ``tol`` (default: the largest times
    ``rtol``, itself ``max(M, N) * eps`` by default); s32."""
    M = _to_inexact(_arraylike(M))
    if abstractify(M).ndim < 2:
        return ew.convert_element_type(_any_nonzero(M), PT.S32)
    s = svdvals(M)
    if tol is None:
        if rtol is None:
            rtol = builtins.max(_dims(M)[-2:]) * _eps(_type(M))
        tol = ew.mul(_max(s, -1, keepdims=True), ew.convert_element_type(_arraylike(rtol),
                                                                          _type(s)))
    else:
        tol = ew.convert_element_type(_arraylike(tol), _type(s))
        tol = reshape(tol, _dims(tol) + (1,)) if abstractify(tol).ndim else tol
    return _sum(ew.gt(*_broadcast_all(s, tol)), -1, dtype=PT.S32)


def _any_nonzero(x: Any) -> Any:
    return _any(ew.ne(x, ew.convert_element_type(0, _type(x))))
