"""Matrix decompositions built from the op set: LU with partial pivoting,
Householder QR, Jacobi ``eigh`` and one-sided Jacobi SVD.

The op set has ``cholesky`` and ``triangular_solve`` but no LU, QR, eigh or
SVD op, so these are written as loops of element-wise ops, reductions and
``dot_general`` (a ``fori_loop`` with static bounds, i.e. a ``scan``).  They
therefore run eagerly, under ``jit``, ``vmap`` and both modes of
differentiation (reverse mode differentiates through the loop).  Leading
dimensions are batch dimensions everywhere.

* ``lu``: LAPACK ``getrf``'s algorithm and conventions (a zero pivot column
  is left unscaled, so a singular matrix gives a zero on ``U``'s diagonal).
* ``householder_qr``: LAPACK ``geqrf``/``orgqr``'s reflectors, so ``Q`` and
  ``R`` have NumPy's signs (``R[j, j] = -sign(a) * norm``).
* ``jacobi_eigh`` / ``jacobi_svd``: cyclic Jacobi in the parallel (round
  robin) order, ``n / 2`` disjoint rotations per step, for a fixed number of
  sweeps (Jacobi converges quadratically; the count depends on the type and
  size, see ``_sweeps``).  A step's rotations and the static permutation to
  the next step's pairs are one matrix ``G``: ``a <- G^H a G``, ``v <- v G``
  (matrix products compile far faster than the same work as element-wise
  updates of rows and columns).  Real symmetric and complex Hermitian
  matrices alike: each rotation is unitary, ``[[c, s], [-conj(s), c]]`` with
  ``c`` real (see ``_rotation``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from ..control_flow import fori_loop
from ..dot_conv import dot_general
from ..reductions import argmax, reduce_sum
from ._core import _broadcast_all, broadcast_to, where
from .._util import dims as _dims, element_type as _type

__all__: list[str] = []  # internal: linalg.py and the functions built on it use these


# -- helpers ---------------------------------------------------------------------------------



def mT(x: Any) -> Any:
    """Swap the two minor axes."""
    nd = len(_dims(x))
    return lax.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def conj(x: Any) -> Any:
    return ew.complex(ew.real(x), ew.neg(ew.imag(x))) if _type(x).is_complex else x


def mH(x: Any) -> Any:
    """The conjugate transpose of the two minor axes."""
    return conj(mT(x))


def bmm(a: Any, b: Any) -> Any:
    """Batched matrix product of operands of equal rank and equal batch dimensions."""
    nd = len(_dims(a))
    batch = tuple(range(nd - 2))
    return dot_general(a, b, (((nd - 1,), (nd - 2,)), (batch, batch)))


def _scalar(value: Any, t: PT) -> Any:
    return ew.convert_element_type(value, t)


_REAL_OF = {PT.C64: PT.F32, PT.C128: PT.F64}


def _iota(shape: tuple[int, ...], dim: int) -> Any:
    return lax.broadcasted_iota(PT.S32, shape, dim)


def _abs2(x: Any) -> Any:
    """|x|^2 (a real for complex x)."""
    if _type(x).is_complex:
        re, im = ew.real(x), ew.imag(x)
        return ew.add(ew.mul(re, re), ew.mul(im, im))
    return ew.mul(x, x)


def _column(a: Any, j: Any) -> Any:
    """Column ``j`` (traced) of each matrix: ``(..., m)``."""
    col = lax.dynamic_slice_in_dim(a, j, 1, axis=len(_dims(a)) - 1)
    return lax.reshape(col, _dims(a)[:-1])


def _entry(v: Any, j: Any) -> Any:
    """Element ``j`` (traced) of the last axis: ``(...)``."""
    out = lax.dynamic_slice_in_dim(v, j, 1, axis=len(_dims(v)) - 1)
    return lax.reshape(out, _dims(v)[:-1])


def _safe_div(x: Any, y: Any, zero: Any) -> Any:
    """x / y, or 0 where ``zero`` (the double-``where`` that keeps gradients finite)."""
    y = where(zero, _scalar(1, _type(y)), y)
    return where(zero, _scalar(0, _type(x)), ew.div(*_broadcast_all(x, y)))


def _expand(x: Any, axis: int) -> Any:
    return lax.expand_dims(x, (axis,))


def eye(n: int, t: PT, batch: tuple[int, ...] = ()) -> Any:
    on = ew.eq(_iota((n, n), 0), _iota((n, n), 1))
    out = ew.select(on, broadcast_to(_scalar(1, t), (n, n)), broadcast_to(_scalar(0, t), (n, n)))
    return broadcast_to(out, batch + (n, n))


# -- LU ---------------------------------------------------------------------------------------

def lu(a: Any) -> tuple[Any, Any, Any]:
    """``(lu, pivots, permutation)`` of ``a`` (..., m, n) with partial pivoting:
    ``a[..., permutation, :] = L @ U``, ``L`` unit lower triangular (below the
    diagonal of ``lu``), ``U`` upper triangular; ``pivots`` are LAPACK's row
    interchanges (s32, 0-based)."""
    *batch, m, n = _dims(a)
    batch = tuple(batch)
    k = min(m, n)
    t = _type(a)
    rows = _iota((m,), 0)
    rows_mn, cols_mn = _iota((m, n), 0), _iota((m, n), 1)

    def step(j, carry):
        a, pivots, perm = carry
        col = _column(a, j)                                      # (..., m)
        mag = where(ew.ge(rows, j), ew.abs(col), -1)
        p = argmax(mag, len(batch), PT.S32)                      # (...)
        is_j = ew.eq(rows, j)
        is_p = ew.eq(broadcast_to(rows, batch + (m,)), _expand(p, len(batch)))
        row_j = lax.dynamic_slice_in_dim(a, j, 1, axis=len(batch))         # (..., 1, n)
        row_p = reduce_sum(where(_expand(is_p, len(batch) + 1), a, _scalar(0, t)),
                           (len(batch),))                                    # (..., n)
        row_p = _expand(row_p, len(batch))
        swap_j, swap_p = _expand(is_j, 1), _expand(is_p, len(batch) + 1)
        a = where(swap_j, row_p, where(swap_p, row_j, a))
        perm_j = _entry(perm, j)
        perm_p = reduce_sum(where(is_p, perm, 0), (len(batch),))
        perm = where(is_j, _expand(perm_p, len(batch)), where(is_p, _expand(perm_j, len(batch)),
                                                                perm))
        pivots = where(ew.eq(_iota((k,), 0), j), _expand(p, len(batch)), pivots)
        # eliminate below the pivot; a zero pivot column stays unscaled (LAPACK)
        pivot = _entry(lax.reshape(row_p, batch + (n,)), j)                  # (...)
        col = _column(a, j)
        below = ew.gt(rows, j)
        factors = where(below, _safe_div(col, _expand(pivot, len(batch)),
                                   _expand(ew.eq(pivot, _scalar(0, t)), len(batch))),
                  _scalar(0, t))                                             # (..., m)
        right = where(ew.gt(cols_mn, j), row_p, _scalar(0, t))               # (..., m, n)
        a = ew.sub(a, ew.mul(broadcast_to(_expand(factors, len(batch) + 1), batch + (m, n)),
                             broadcast_to(right, batch + (m, n))))
        in_col = ew.bitwise_and(ew.gt(rows_mn, j), ew.eq(cols_mn, j))
        a = where(in_col, _expand(factors, len(batch) + 1), a)
        return a, pivots, perm

    init = (a, broadcast_to(np.zeros((), np.int32), batch + (k,)),
            broadcast_to(_iota((m,), 0), batch + (m,)))
    return fori_loop(0, k, step, init) if k else init


def lu_unpack(lu_: Any) -> tuple[Any, Any]:
    """``(L, U)`` from ``lu``'s packed factors (square or not)."""
    *_, m, n = _dims(lu_)
    k = min(m, n)
    t = _type(lu_)
    rows, cols = _iota((m, n), 0), _iota((m, n), 1)
    zero = _scalar(0, t)
    lower = where(ew.gt(rows, cols), lu_, zero)
    lower = where(ew.eq(rows, cols), _scalar(1, t), lower)
    upper = where(ew.le(rows, cols), lu_, zero)
    nd = len(_dims(lu_))
    lower = lax.slice_in_dim(lower, 0, k, 1, nd - 1)
    upper = lax.slice_in_dim(upper, 0, k, 1, nd - 2)
    return lower, upper


# -- QR ---------------------------------------------------------------------------------------

def householder_qr(a: Any, full: bool) -> tuple[Any, Any]:
    """``(q, r)`` of ``a`` (..., m, n) by Householder reflectors (LAPACK's signs):
    ``q`` (..., m, m if full else k), ``r`` (..., m if full else k, n)."""
    *batch, m, n = _dims(a)
    batch = tuple(batch)
    nb = len(batch)
    k = min(m, n)
    t = _type(a)
    rt = _REAL_OF.get(t, t)
    rows = _iota((m,), 0)
    rows_mn, cols_mn = _iota((m, n), 0), _iota((m, n), 1)

    def step(j, carry):
        r, q = carry
        x = _column(r, j)                                                   # (..., m)
        alpha = _entry(x, j)                                                # (...)
        below = ew.gt(rows, j)
        sub2 = reduce_sum(where(below, _abs2(x), _scalar(0, rt)), (nb,))    # (...)
        alpha_re = ew.real(alpha) if t.is_complex else alpha
        alpha_im2 = _abs2(ew.imag(alpha)) if t.is_complex else _scalar(0, rt)
        skip = ew.bitwise_and(ew.eq(sub2, _scalar(0, rt)), ew.eq(alpha_im2, _scalar(0, rt)))
        norm = ew.sqrt(ew.add(ew.add(ew.mul(alpha_re, alpha_re), alpha_im2),
                              where(skip, _scalar(1, rt), sub2)))
        sign = where(ew.lt(alpha_re, _scalar(0, rt)), _scalar(-1, rt), _scalar(1, rt))
        beta = ew.neg(ew.mul(sign, norm))                                   # real
        beta_t = ew.complex(beta, _scalar(0, rt)) if t.is_complex else beta
        tau = _safe_div(ew.sub(beta_t, alpha), beta_t, skip)               # (...)
        scale = _safe_div(_scalar(1, t), ew.sub(alpha, beta_t), skip)
        v = where(below, ew.mul(x, _expand(scale, nb)), _scalar(0, t))
        v = where(ew.eq(rows, j), _scalar(1, t), v)                         # (..., m), v_j = 1
        v_col = _expand(v, nb + 1)                                          # (..., m, 1)
        # r <- H^H r = r - conj(tau) v (v^H r);  q <- q H = q - tau (q v) v^H
        vh_r = bmm(mH(v_col), r)                                            # (..., 1, n)
        r = ew.sub(r, ew.mul(_expand(_expand(conj(tau), nb), nb), bmm(v_col, vh_r)))
        r_jj = where(skip, alpha, beta_t)
        in_col = ew.eq(cols_mn, j)
        r = where(ew.bitwise_and(in_col, ew.gt(rows_mn, j)), _scalar(0, t), r)
        r = where(ew.bitwise_and(in_col, ew.eq(rows_mn, j)),
                  _expand(_expand(r_jj, nb), nb), r)
        q_v = bmm(q, v_col)                                                 # (..., m, 1)
        q = ew.sub(q, ew.mul(_expand(_expand(tau, nb), nb), bmm(q_v, mH(v_col))))
        return r, q

    r, q = fori_loop(0, k, step, (a, eye(m, t, batch))) if k else (a, eye(m, t, batch))
    if not full:
        q = lax.slice_in_dim(q, 0, k, 1, nb + 1)
        r = lax.slice_in_dim(r, 0, k, 1, nb)
    return q, r


# -- Jacobi eigh and SVD ----------------------------------------------------------------------

def _sweeps(t: PT, n: int) -> int:
    """Enough cyclic sweeps for convergence to the type's precision."""
    base = 6 if _REAL_OF.get(t, t) in (PT.F32, PT.F16, PT.BF16) else 8
    return base + max(0, math.ceil(math.log2(max(n, 2))) - 3)


def _round_robin(n: int) -> np.ndarray:
    """The fixed permutation from one round's order ``[tops, bottoms]`` to the
    next (the circle method: position 0 stays, the others rotate), so that
    pairing ``order[i]`` with ``order[k + i]`` meets every pair once in
    ``n - 1`` rounds."""
    k = n // 2
    tops, bottoms = list(range(k)), list(range(k, n))
    new_tops = [tops[0]] + [bottoms[0]] + tops[1:-1]
    new_bottoms = bottoms[1:] + [tops[-1]]
    return np.asarray(new_tops + new_bottoms if k > 1 else tops + bottoms)


def _rotation(app: Any, aqq: Any, apq: Any) -> tuple[Any, Any]:
    """(c, s) of the unitary ``[[c, s], [-conj(s), c]]`` (``c`` real) that
    diagonalises the Hermitian ``[[app, apq], [conj(apq), aqq]]`` (``app``,
    ``aqq`` real; ``apq`` real or complex).

    With ``apq = |apq| e^{i phi}``, ``diag(1, e^{-i phi})`` makes the problem
    real symmetric with off-diagonal ``|apq|``; Golub & Van Loan's sym.schur2
    rotation of that, conjugated back, is the unitary above with ``s = c t
    e^{i phi}``.  Its tangent is written without dividing by ``apq`` (nor
    taking its phase): ``t e^{i phi} = 2 apq sign(d) / (|d| + hypot(d, 2
    |apq|))``, ``d = aqq - app``, so that a tiny ``apq`` after convergence
    neither overflows nor gives NaN derivatives."""
    t = _type(app)
    d, two_apq = ew.sub(aqq, app), ew.mul(apq, _scalar(2, _type(apq)))
    both_zero = ew.bitwise_and(ew.eq(d, _scalar(0, t)), ew.eq(apq, _scalar(0, _type(apq))))
    sign = where(ew.lt(d, _scalar(0, t)), _scalar(-1, t), _scalar(1, t))
    radius2 = ew.add(ew.mul(d, d), _abs2(two_apq))
    radius = ew.sqrt(where(both_zero, _scalar(1, t), radius2))
    tan = _safe_div(ew.mul(two_apq, sign), ew.add(ew.abs(d), radius), both_zero)
    c = ew.rsqrt(ew.add(_abs2(tan), _scalar(1, t)))
    return c, ew.mul(tan, c)


def _diagonal(x: Any) -> Any:
    """The main diagonal of square minor axes, (..., n)."""
    n = _dims(x)[-1]
    on = ew.eq(_iota((n, n), 0), _iota((n, n), 1))
    return reduce_sum(where(on, x, _scalar(0, _type(x))), (len(_dims(x)) - 1,))


def _real_diagonal(x: Any) -> Any:
    """The diagonal's real part (a Hermitian matrix's diagonal is real)."""
    d = _diagonal(x)
    return ew.real(d) if _type(d).is_complex else d


def _rotation_matrix(c: Any, s: Any, sigma: np.ndarray, nb: int) -> Any:
    """``G = J P``: the block rotation J = [[C, S], [-S^*, C]] of the index halves
    (C, S diagonal), then the static permutation ``sigma`` of the columns
    (``(x P)[:, i] = x[:, sigma[i]]``), as one matrix built from ``c`` and ``s``
    with static masks."""
    n = len(sigma)
    k = n // 2
    rows, cols = np.arange(n)[:, None], sigma[None, :]
    on_diagonal = rows == cols
    off_diagonal = ((rows == cols - k) & (cols >= k)) | ((rows == cols + k) & (cols < k))
    t = _type(s)
    if t.is_complex:
        c = ew.complex(c, _scalar(0, _type(c)))
    cs = _expand(lax.concatenate([c, c], nb), nb + 1)                  # c of each row's pair
    ss = _expand(lax.concatenate([s, ew.neg(conj(s))], nb), nb + 1)    # s above, -s* below
    return where(on_diagonal, cs, where(off_diagonal, ss, _scalar(0, t)))


def _pad_even(x: Any, rows: bool) -> Any:
    """Append a zero column (and row, if ``rows``) so that the size is even."""
    nd = len(_dims(x))
    config = [(0, 0, 0)] * nd
    config[-1] = (0, 1, 0)
    if rows:
        config[-2] = (0, 1, 0)
    return lax.pad(x, _scalar(0, _type(x)), config)


def jacobi_eigh(a: Any) -> tuple[Any, Any]:
    """Eigenvalues (real, unsorted) and eigenvectors (columns) of real symmetric
    or complex Hermitian ``a``."""
    t = _type(a)
    *batch, n, _ = _dims(a)
    nb = len(batch)
    odd = n % 2
    if odd:
        a = _pad_even(a, rows=True)
    size = n + odd
    k = size // 2
    sigma = _round_robin(size)
    order = np.arange(size)
    v = eye(size, t, tuple(batch))
    if size < 2:
        return _real_diagonal(a), v
    pair = np.arange(size)[None, :] == np.arange(size)[:, None] + k   # a[i, i + k]

    def step(_, carry):
        a, v = carry
        diag = _real_diagonal(a)
        app = lax.slice_in_dim(diag, 0, k, 1, nb)
        aqq = lax.slice_in_dim(diag, k, size, 1, nb)
        apq = lax.slice_in_dim(reduce_sum(where(pair, a, _scalar(0, t)), (nb + 1,)), 0, k, 1, nb)
        g = _rotation_matrix(*_rotation(app, aqq, apq), sigma, nb)
        return bmm(mH(g), bmm(a, g)), bmm(v, g)

    rounds = _sweeps(t, n) * (size - 1)
    a, v = fori_loop(0, rounds, step, (a, v))
    for _ in range(rounds):
        order = order[sigma]
    inverse = np.argsort(order)
    w = _permute(_real_diagonal(a), inverse, nb)
    v = _permute(v, inverse, nb + 1)
    if odd:
        w = lax.slice_in_dim(w, 0, n, 1, nb)
        v = lax.slice(v, (0,) * (nb + 2), tuple(batch) + (n, n))
    return w, v


def _permute(x: Any, perm: np.ndarray, axis: int) -> Any:
    """``x`` with ``axis`` reordered by the static permutation ``perm``
    (runs of consecutive indices become slices joined by one concatenate)."""
    pieces, start = [], 0
    for i in range(1, len(perm) + 1):
        if i == len(perm) or perm[i] != perm[i - 1] + 1:
            pieces.append(lax.slice_in_dim(x, int(perm[start]), int(perm[i - 1]) + 1, 1, axis))
            start = i
    return pieces[0] if len(pieces) == 1 else lax.concatenate(pieces, axis)


def jacobi_svd(a: Any) -> tuple[Any, Any, Any]:
    """One-sided Jacobi on the columns of real or complex ``a`` (..., m, n),
    m >= n: ``(u_sigma, sigma, v)`` with ``a @ v = u_sigma`` whose columns are
    orthogonal with norms ``sigma`` (real, unsorted); each step's rotations
    diagonalise the 2x2 Gram matrices ``[[|u_p|^2, u_p^H u_q], [., |u_q|^2]]``."""
    t = _type(a)
    *batch, m, n = _dims(a)
    nb = len(batch)
    odd = n % 2
    if odd:
        a = _pad_even(a, rows=False)
    size = n + odd
    k = size // 2
    sigma_perm = _round_robin(size)
    v = eye(size, t, tuple(batch))

    def step(_, carry):
        u, v = carry
        left = lax.slice_in_dim(u, 0, k, 1, nb + 1)
        right = lax.slice_in_dim(u, k, size, 1, nb + 1)
        app = reduce_sum(_abs2(left), (nb,))
        aqq = reduce_sum(_abs2(right), (nb,))
        apq = reduce_sum(ew.mul(conj(left), right), (nb,))
        g = _rotation_matrix(*_rotation(app, aqq, apq), sigma_perm, nb)
        return bmm(u, g), bmm(v, g)

    rounds = _sweeps(t, n) * (size - 1) if size > 1 else 0
    u, v = fori_loop(0, rounds, step, (a, v)) if rounds else (a, v)
    order = np.arange(size)
    for _ in range(rounds):
        order = order[sigma_perm]
    inverse = np.argsort(order)
    u, v = _permute(u, inverse, nb + 1), _permute(v, inverse, nb + 1)
    if odd:
        u = lax.slice_in_dim(u, 0, n, 1, nb + 1)
        v = lax.slice(v, (0,) * (nb + 2), tuple(batch) + (n, n))
    sigma = ew.sqrt(reduce_sum(_abs2(u), (nb,)))
    return u, sigma, v
