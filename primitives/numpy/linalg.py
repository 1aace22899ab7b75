"""``numpy.linalg`` over the op set (``import primitives.numpy.linalg``; JAX's
``jax.numpy.linalg``).

Everything works eagerly, under ``jit``, ``vmap`` and differentiation, and
batches over leading dimensions.  ``cholesky`` is XLA's Cholesky; the rest
stand on ``_decompositions`` (built from element-wise ops, reductions,
``dot_general`` and ``triangular_solve`` in ``fori_loop``s, since the op set
has no LU, QR, eigh or SVD op):

* LU with partial pivoting: ``solve``, ``inv``, ``det``, ``slogdet``,
  ``tensorsolve``, ``tensorinv``, ``matrix_power`` (negative powers);
* Householder QR: ``qr`` (LAPACK's signs, so NumPy's results);
* Jacobi ``eigh`` (real symmetric or complex Hermitian): ``eigh``, ``eigvalsh``;
* one-sided Jacobi SVD (real or complex): ``svd``, ``svdvals``, ``pinv``,
  ``lstsq``, ``matrix_rank``, ``cond``, and the 2-norms and nuclear norms of
  ``norm``.

``eig``/``eigvals`` (non-symmetric) run LAPACK on the host through a callback.
Results follow JAX: ``eigh``/``svd``/``qr``/``slogdet`` return named tuples;
``solve`` treats a 1-D ``b`` as a vector and otherwise ``b[..., M, K]``;
``lstsq`` always returns the residuals; eigenvectors and singular vectors
are determined up to their signs (phases), which may differ from LAPACK's.
Not covered: ``svd``'s ``subset_by_index``.
"""
from __future__ import annotations

import operator
from collections import namedtuple
from typing import Any, Sequence

import numpy as np

from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from ..fft_linalg import cholesky as _lax_cholesky, triangular_solve
from . import _decompositions as dec
from ._core import _to_inexact, _arraylike, broadcast_shapes, broadcast_to, matmul, not_equal, \
    reshape, sum as _sum, true_divide, where
from ._gather_indexing import take_along_axis
from ._linalg import outer as _outer, tensordot, vecdot
from ._linalg import cross as _cross
from ._math import abs as _abs, conj, sign, sqrt
from ._reductions import max as _max, min as _min, prod
from ._shaping import diagonal as _diagonal, matrix_transpose
from ._shaping import trace as _trace
from ._spectral import EighResult, SVDResult, eigh, eigvalsh, lstsq, matrix_rank, pinv, svd, \
    svdvals  # noqa: F401 (the result types too)
from ._spectral import _diag, _matrices
from .._util import dims as _dims, element_type as _type

__all__ = [
    "cholesky", "cond", "cross", "det", "diagonal", "eig", "eigvals", "eigh", "eigvalsh", "inv",
    "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose",
    "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals", "tensordot",
    "tensorinv", "tensorsolve", "trace", "vecdot", "vector_norm",
]

QRResult = namedtuple("QRResult", "Q R")
SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
EigResult = namedtuple("EigResult", "eigenvalues eigenvectors")


# -- LU-based ----------------------------------------------------------------------------------

def _parity(pivots: Any) -> Any:
    """(-1) ** (the number of row interchanges), as an s32."""
    k = _dims(pivots)[-1]
    swaps = _sum(not_equal(pivots, lax.iota(PT.S32, k)), -1, dtype=PT.S32)
    odd = ew.rem(swaps, np.int32(2))
    return ew.sub(np.int32(1), ew.mul(odd, np.int32(2)))


def _lu_solve(lu: Any, perm: Any, b: Any) -> Any:
    """``x`` with ``a x = b`` from ``a``'s LU factors (``b``: (..., M, K))."""
    index = lax.expand_dims(perm, (len(_dims(perm)),))
    pb = take_along_axis(b, broadcast_to(index, _dims(b)), -2)
    y = triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return triangular_solve(lu, y, left_side=True, lower=False)


def solve(a: Any, b: Any) -> Any:
    """``x`` with ``a @ x = b``: a 1-D ``b`` is a vector (for every matrix of
    ``a``); otherwise ``b`` is (..., M, K); batch dimensions broadcast."""
    a = _matrices("solve", a)
    b = _arraylike(b)
    a, b = ew.promote(a, _to_inexact(b))
    m = _dims(a)[-1]
    vector = abstractify(b).ndim == 1
    if vector:
        b = reshape(b, (m, 1))
    if _dims(b)[-2] != m:
        raise ValueError(f"solve: incompatible shapes {_dims(a)} and {_dims(b)}")
    batch = broadcast_shapes(_dims(a)[:-2], _dims(b)[:-2])
    a = broadcast_to(a, batch + (m, m))
    b = broadcast_to(b, batch + _dims(b)[-2:])
    lu, _, perm = dec.lu(a)
    x = _lu_solve(lu, perm, b)
    return reshape(x, batch + (m,)) if vector else x


def inv(a: Any) -> Any:
    """The inverse of each square matrix (by LU; singular matrices give inf/NaN)."""
    a = _matrices("inv", a)
    m = _dims(a)[-1]
    return solve(a, broadcast_to(dec.eye(m, _type(a)), _dims(a)))


def slogdet(a: Any, *, method: str | None = None) -> Any:
    """``(sign, logabsdet)`` of each square matrix (sign 0 and -inf if singular;
    for complex matrices the sign is a unit complex number)."""
    a = _matrices("slogdet", a)
    lu, pivots, _ = dec.lu(a)
    d = _diag(lu)
    magnitude = _abs(d)
    logabsdet = _sum(ew.log(magnitude), -1)
    parity = ew.convert_element_type(_parity(pivots), _type(a))
    if _type(a).is_complex:
        zero = ew.eq(magnitude, ew.convert_element_type(0, _type(magnitude)))
        unit = where(zero, ew.convert_element_type(0, _type(a)),
                     true_divide(d, where(zero, ew.convert_element_type(1, _type(magnitude)),
                                          magnitude)))
        s = ew.mul(parity, prod(unit, -1))
    else:
        s = ew.mul(parity, prod(sign(d), -1))
    return SlogdetResult(s, logabsdet)


def det(a: Any) -> Any:
    """The determinant of each square matrix: the product of ``U``'s diagonal,
    signed by the row interchanges."""
    a = _matrices("det", a)
    lu, pivots, _ = dec.lu(a)
    return ew.mul(ew.convert_element_type(_parity(pivots), _type(a)), prod(_diag(lu), -1))


def matrix_power(a: Any, n: int) -> Any:
    """``a`` to the integer power ``n`` by repeated squaring (``n < 0``: of ``inv(a)``)."""
    n = operator.index(n)
    a = _matrices("matrix_power", a) if n < 0 else _arraylike(a)  # integers stay integers
    if len(_dims(a)) < 2 or _dims(a)[-1] != _dims(a)[-2]:
        raise ValueError(f"matrix_power: expected (a batch of) square matrices, got shape "
                         f"{_dims(a)}")
    if n < 0:
        a, n = inv(a), -n
    result = None
    power = a
    while n:
        if n & 1:
            result = power if result is None else matmul(result, power)
        n >>= 1
        if n:
            power = matmul(power, power)
    return result if result is not None else broadcast_to(dec.eye(_dims(a)[-1], _type(a)),
                                                          _dims(a))


def tensorsolve(a: Any, b: Any, axes: Sequence[int] | None = None) -> Any:
    """``x`` with ``tensordot(a, x, x.ndim) = b``."""
    a, b = _arraylike(a), _arraylike(b)
    if axes is not None:
        from ._indexing import moveaxis
        rank = abstractify(a).ndim
        a = moveaxis(a, tuple(axes), tuple(range(rank - len(axes), rank)))
    b_dims = _dims(b)
    x_dims = _dims(a)[len(b_dims):]
    rows, cols = int(np.prod(b_dims, dtype=np.int64)), int(np.prod(x_dims, dtype=np.int64))
    if rows != cols:
        raise ValueError(f"tensorsolve: a's leading dimensions {b_dims} and trailing ones "
                         f"{x_dims} do not make a square matrix")
    x = solve(reshape(a, (rows, cols)), reshape(b, (rows,)))
    return reshape(x, x_dims)


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of ``a`` under ``tensordot(., ., ind)``: shape
    ``a.shape[ind:] + a.shape[:ind]``."""
    a = _arraylike(a)
    dims = _dims(a)
    front, back = dims[:ind], dims[ind:]
    rows, cols = int(np.prod(front, dtype=np.int64)), int(np.prod(back, dtype=np.int64))
    if rows != cols:
        raise ValueError(f"tensorinv: {front} and {back} do not make a square matrix")
    return reshape(inv(reshape(a, (rows, cols))), back + front)


# -- eig: LAPACK's geev on the host -------------------------------------------------------------

def _host_eig(a: Any) -> tuple[Any, Any]:
    """LAPACK's ``geev`` through a host callback: complex eigenvalues and
    unit-norm right eigenvectors of ``a``'s matrices."""
    t = _type(a)
    ct = (PT.C128 if t in (PT.F64, PT.C128) else PT.C64).numpy_dtype
    dims = _dims(a)
    from numxla._api import ShapeDtypeStruct, pure_callback

    def host(m: np.ndarray) -> tuple:
        w, v = np.linalg.eig(np.asarray(m))
        return w.astype(ct), v.astype(ct)
    return pure_callback(host, (ShapeDtypeStruct(dims[:-1], ct),
                                ShapeDtypeStruct(dims, ct)), a)


def _eig_jvp(primals: tuple, tangents: tuple) -> tuple:
    """First-order perturbation theory for distinct eigenvalues: with ``M =
    V^-1 dA V``, ``dw = diag(M)`` and ``dV = V (F * M)``, ``F[i, j] = 1 / (w[j] -
    w[i])`` off the diagonal and 0 on it; then the part of ``dV`` that would
    change each column's norm is removed (the columns stay unit vectors)."""
    (a,), (da,) = primals, tangents
    w, v = _eig(a)
    ct = _type(w)
    m = matmul(matmul(inv(v), ew.convert_element_type(da, ct)), v)
    n = _dims(a)[-1]
    off = np.logical_not(np.eye(n, dtype=bool))
    r = len(_dims(w))
    gaps = ew.sub(lax.expand_dims(w, (r - 1,)), lax.expand_dims(w, (r,)))
    one = ew.convert_element_type(1.0, ct)
    f = where(off, true_divide(one, where(off, gaps, one)), ew.convert_element_type(0.0, ct))
    dv = matmul(v, ew.mul(f, m))
    along = _sum(ew.mul(conj(v), dv), axis=-2, keepdims=True)
    dv = ew.sub(dv, ew.mul(v, ew.convert_element_type(ew.real(along), ct)))
    return (w, v), (_diagonal(m, axis1=-2, axis2=-1), dv)


_eig = None


def eig(a: Any) -> Any:
    """Eigenvalues and right eigenvectors of general square matrices (complex
    results, each eigenvector of unit norm), computed on the host by LAPACK's
    ``geev`` through NumPy, as JAX computes them on CPU: eagerly, under
    ``jit`` (a host callback) and ``vmap`` (one call per matrix).  Forward and
    reverse mode follow the perturbation rule of ``_eig_jvp``, as JAX's
    (exact for distinct eigenvalues)."""
    global _eig
    if _eig is None:
        from numxla.autodiff.custom import custom_jvp
        _eig = custom_jvp(_host_eig)
        _eig.defjvp(_eig_jvp)
    return EigResult(*_eig(_matrices("eig", a)))


def eigvals(a: Any) -> Any:
    """The eigenvalues of general square matrices (complex; see :func:`eig`)."""
    return eig(a)[0]


# -- Cholesky and QR ---------------------------------------------------------------------------

def _symmetrized(a: Any) -> Any:
    return ew.mul(ew.add(a, dec.mH(a)), ew.convert_element_type(0.5, _type(a)))


def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The Cholesky factor of each Hermitian positive-definite matrix: ``L`` with
    ``a = L @ L^H`` (``U = L^H`` if ``upper``); NaNs if not positive definite."""
    a = _matrices("cholesky", a)
    if symmetrize_input:
        a = _symmetrized(a)
    lower = _lax_cholesky(a, lower=True)
    return dec.mH(lower) if upper else lower


def qr(a: Any, mode: str = "reduced") -> Any:
    """``(Q, R)`` of each matrix by Householder reflections (NumPy's signs);
    ``mode``: "reduced", "complete" or "r" (just ``R``)."""
    if mode not in ("reduced", "complete", "r"):
        raise NotImplementedError(f"qr: mode {mode!r} is not supported (reduced, complete, r)")
    a = _matrices("qr", a, square=False)
    q, r = dec.householder_qr(a, full=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


# -- norms and condition numbers --------------------------------------------------------------

def _abs2(x: Any) -> Any:
    return ew.real(ew.mul(x, conj(x))) if _type(x).is_complex else ew.mul(x, x)


def _vector_norm(x: Any, ord: Any, axis: tuple[int, ...], keepdims: bool) -> Any:
    x = _to_inexact(x)
    if ord is None or ord == 2:
        return sqrt(_sum(_abs2(x), axis, keepdims))
    magnitude = _abs(x)
    if ord == np.inf:
        return _max(magnitude, axis, keepdims)
    if ord == -np.inf:
        return _min(magnitude, axis, keepdims)
    if ord == 0:
        return _sum(ew.convert_element_type(ew.ne(magnitude, ew.convert_element_type(
            0, _type(magnitude))), _type(magnitude)), axis, keepdims)
    if ord == 1:
        return _sum(magnitude, axis, keepdims)
    if isinstance(ord, str):
        raise ValueError(f"norm: invalid order {ord!r} for vectors")
    p = ew.convert_element_type(ord, _type(magnitude))
    return ew.pow(_sum(ew.pow(magnitude, p), axis, keepdims),
                  ew.div(ew.convert_element_type(1, _type(magnitude)), p))


def _matrix_norm(x: Any, ord: Any, axes: tuple[int, int], keepdims: bool) -> Any:
    x = _to_inexact(x)
    rank = abstractify(x).ndim
    r, c = (a % rank for a in axes)
    if ord in (None, "fro", "f"):
        return sqrt(_sum(_abs2(x), (r, c), keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        sum_axis, pick_axis = (r, c) if ord in (1, -1) else (c, r)
        sums = _sum(_abs(x), sum_axis, keepdims=True)
        pick = _max if ord in (1, np.inf) else _min
        out = pick(sums, pick_axis, keepdims=True)
    elif ord in (2, -2, "nuc"):
        from ._indexing import moveaxis
        s = svdvals(moveaxis(x, (r, c), (-2, -1)))
        out = {2: lambda: _max(s, -1), -2: lambda: _min(s, -1), "nuc": lambda: _sum(s, -1)}[
            ord]()
        if keepdims:
            shape = [1 if i in (r, c) else d for i, d in enumerate(_dims(x))]
            return reshape(out, shape)
        return out
    else:
        raise ValueError(f"norm: invalid order {ord!r} for matrices")
    if keepdims:
        return out
    return reshape(out, [d for i, d in enumerate(_dims(x)) if i not in (r, c)])


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """NumPy's ``norm``: a vector norm over one axis, a matrix norm over two
    (``None``/"fro", "nuc", 1, -1, 2, -2, inf, -inf), the 2-norm of the
    flattened array when ``axis`` and ``ord`` are None."""
    x = _arraylike(x)
    rank = abstractify(x).ndim
    if axis is None:
        if ord is None:
            out = _vector_norm(reshape(x, (-1,)), None, (0,), False)
            return reshape(out, (1,) * rank) if keepdims else out
        axis = tuple(range(rank))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if len(axes) == 1:
        return _vector_norm(x, ord, tuple(a % rank for a in axes), keepdims)
    if len(axes) == 2:
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(f"norm: improper number of dimensions to norm ({len(axes)})")


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    """The array API's vector norm over ``axis`` (all axes, flattened, if None)."""
    x = _arraylike(x)
    rank = abstractify(x).ndim
    axes = tuple(range(rank)) if axis is None else \
        tuple(a % rank for a in ((axis,) if isinstance(axis, (int, np.integer)) else axis))
    return _vector_norm(x, ord, axes, keepdims)


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    """The array API's matrix norm of the last two axes."""
    return _matrix_norm(_arraylike(x), ord, (-2, -1), keepdims)


def cond(x: Any, p: Any = None) -> Any:
    """The condition number in the ``p`` norm: by singular values for None/2/-2,
    else ``norm(x, p) * norm(inv(x), p)``."""
    x = _matrices("cond", x, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        s = svdvals(x)
        big, small = _max(s, -1), _min(s, -1)
        return true_divide(big, small) if p != -2 else true_divide(small, big)
    return ew.mul(norm(x, p, (-2, -1)), norm(inv(x), p, (-2, -1)))


# -- the array API's names for products and views ----------------------------------------------

def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    """The cross product of 3-vectors along ``axis``."""
    if _dims(_arraylike(x1))[axis] != 3 or _dims(_arraylike(x2))[axis] != 3:
        raise ValueError("linalg.cross: both inputs must have size 3 along axis")
    return _cross(x1, x2, axis=axis)


def outer(x1: Any, x2: Any, /) -> Any:
    """The outer product of two vectors."""
    x1, x2 = _arraylike(x1), _arraylike(x2)
    if abstractify(x1).ndim != 1 or abstractify(x2).ndim != 1:
        raise ValueError("linalg.outer: both inputs must be one-dimensional")
    return _outer(x1, x2)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    """The ``offset`` diagonal of the last two axes."""
    return _diagonal(x, offset, -2, -1)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    """The sum of the ``offset`` diagonal of the last two axes."""
    return _trace(x, offset, -2, -1, dtype)


def multi_dot(arrays: Sequence[Any], *, precision: Any = None) -> Any:
    """The product of a chain of matrices (the first may be a row vector, the
    last a column vector), left to right."""
    arrays = [_arraylike(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    out = arrays[0]
    for x in arrays[1:]:
        out = matmul(out, x)
    return out

