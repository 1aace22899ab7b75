"""``jax.lax.linalg``: the decompositions under lax's names, argument
conventions and result orders (``eigh`` gives ``(v, w)``; ``lu``, ``eig``,
``schur``, ``hessenberg`` and ``tridiagonal`` give lists, as JAX's do).

Built on ``numxla.numpy.linalg`` and ``numxla.scipy.linalg`` where they have
the decomposition, on numxla ops otherwise (Householder products, the
Cholesky rank-one update, tridiagonal solves, QDWH polar iterations: all
differentiable and batched); ``hessenberg``, ``tridiagonal``, pivoted ``qr``,
``schur`` and ``eig`` with left eigenvectors run LAPACK on the host through
SciPy, as JAX does on CPU (eagerly, under ``jit`` and under ``vmap``; no
derivative).  Loaded by ``composites.linalg`` on first use.
"""
from __future__ import annotations

import enum
from typing import Any, Callable

import numpy as np

from . import numpy as xnp
from .fft_linalg import triangular_solve
from .numpy import _decompositions as dec

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky",
           "cholesky_update", "eig", "eigh", "hessenberg", "householder_product", "lu",
           "lu_pivots_to_permutation", "ormqr", "qdwh", "qr", "schur", "svd",
           "symmetric_product", "triangular_solve", "tridiagonal", "tridiagonal_solve"]


class EigImplementation(enum.Enum):
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


# -- helpers ----------------------------------------------------------------------------------

def _matrices(fn: str, x: Any, square: bool = True) -> Any:
    """``x`` as an inexact array of matrices (``...``, m, n)."""
    from numxla.scipy._util import promote_inexact
    (x,) = promote_inexact(x)
    if x.ndim < 2 or (square and x.shape[-1] != x.shape[-2]):
        raise ValueError(f"lax.linalg.{fn}: x must be a batch of {'square ' if square else ''}"
                         f"matrices, got shape {tuple(x.shape)}")
    return x


def _mH(x: Any) -> Any:
    return xnp.conj(xnp.swapaxes(x, -1, -2))


def _on_host(fn: Callable[..., tuple], dtypes: list, shapes: list, *arrays: Any) -> Any:
    """``fn`` (NumPy matrices in, a tuple out) run by SciPy on the host, per matrix."""
    import numxla.scipy.linalg  # noqa: F401  (loads _linalg_extra in its order)
    from numxla.scipy._linalg_extra import _on_host as run
    return run(fn, [np.dtype(d) for d in dtypes], shapes, *arrays)


def _complex_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex128 if dtype in (np.float64, np.complex128) else np.complex64)


def _real_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float64 if dtype in (np.float64, np.complex128) else np.float32)


def _lapack(name: str, m: np.ndarray) -> Callable[..., Any]:
    import scipy.linalg.lapack
    return scipy.linalg.lapack.get_lapack_funcs((name,), (m,))[0]


# -- wrappers of numxla.numpy.linalg / numxla.scipy.linalg ------------------------------------

def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor of Hermitian positive-definite matrices."""
    return xnp.linalg.cholesky(x, symmetrize_input=symmetrize_input)


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: Any = None, use_magma: Any = None) -> list[Any]:
    """``[w, vl, vr]`` (those asked for): eigenvalues and unit-norm left and
    right eigenvectors of general square matrices, complex, as LAPACK's
    ``geev`` gives them.  Without left eigenvectors it is ``numpy.linalg.eig``
    (differentiable); with them it runs SciPy on the host."""
    x = _matrices("eig", x)
    if not compute_left_eigenvectors:
        if compute_right_eigenvectors:
            return list(xnp.linalg.eig(x))
        return [xnp.linalg.eigvals(x)]
    import scipy.linalg
    n, ct = x.shape[-1], _complex_of(np.dtype(x.dtype))
    count = 3 if compute_right_eigenvectors else 2
    return list(_on_host(
        lambda m: scipy.linalg.eig(m, left=True, right=compute_right_eigenvectors),
        [ct] * count, [(n,)] + [(n, n)] * (count - 1), x))


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: tuple[int, int] | None = None,
         implementation: Any = None) -> tuple[Any, Any]:
    """``(v, w)``: eigenvectors (columns) and ascending eigenvalues of
    Hermitian matrices, read from the ``lower`` or upper triangle;
    ``subset_by_index=(lo, hi)`` keeps eigenpairs ``lo..hi-1``."""
    w, v = xnp.linalg.eigh(x, UPLO="L" if lower else "U", symmetrize_input=symmetrize_input)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        v, w = v[..., lo:hi], w[..., lo:hi]
    return v, w


def lu(x: Any) -> list[Any]:
    """``[lu, pivots, permutation]``: LU with partial pivoting, ``x[perm] = L U``
    (``L`` unit lower, below ``lu``'s diagonal; ``U`` upper); ``pivots`` are
    LAPACK's row swaps (int32, 0-based)."""
    return list(dec.lu(_matrices("lu", x, square=False)))


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: Any = None) -> tuple[Any, ...]:
    """``(q, r)``, or ``(q, r, p)`` with column pivoting (``x[:, p] = q r``,
    run by LAPACK's ``geqp3`` on the host)."""
    x = _matrices("qr", x, square=False)
    if not pivoting:
        return tuple(xnp.linalg.qr(x, mode="complete" if full_matrices else "reduced"))
    import scipy.linalg
    m, n = x.shape[-2:]
    k = m if full_matrices else min(m, n)
    mode = "full" if full_matrices else "economic"
    return _on_host(lambda a: scipy.linalg.qr(a, mode=mode, pivoting=True),
                    [x.dtype, x.dtype, np.int32], [(m, k), (k, n), (n,)], x)


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: Any = None) -> Any:
    """``(u, s, vh)`` (or ``s``), singular values descending;
    ``subset_by_index=(lo, hi)`` keeps triplets ``lo..hi-1`` (not with
    ``full_matrices``)."""
    x = _matrices("svd", x, square=False)
    if subset_by_index is not None and full_matrices \
            and tuple(subset_by_index) != (0, min(x.shape[-2:])):
        raise ValueError("lax.linalg.svd: full_matrices and subset_by_index cannot both be set")
    out = xnp.linalg.svd(x, full_matrices=full_matrices, compute_uv=compute_uv)
    if subset_by_index is None:
        return tuple(out) if compute_uv else out
    lo, hi = subset_by_index
    if not compute_uv:
        return out[..., lo:hi]
    u, s, vh = out
    return u[..., lo:hi], s[..., lo:hi], vh[..., lo:hi, :]


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Callable[..., Any] | None = None) -> list[Any]:
    """``[t, vs]`` (``[t]`` without vectors): ``x = vs t vs^H``, ``t`` quasi-upper
    triangular for real ``x`` (LAPACK's ``gees`` on the host)."""
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError("lax.linalg.schur: sort_eig_vals and select_callable are not "
                                  "supported")
    from numxla.scipy.linalg import schur as scipy_schur
    x = _matrices("schur", x)
    real = not np.issubdtype(np.dtype(x.dtype), np.complexfloating)
    t, vs = scipy_schur(x, output="real" if real else "complex")
    return [t, vs] if compute_schur_vectors else [t]


# -- host LAPACK reductions -------------------------------------------------------------------

def hessenberg(a: Any) -> list[Any]:
    """``[a, taus]``: the upper Hessenberg reduction in LAPACK's packed form
    (``gehrd``): the Hessenberg matrix on and above the first subdiagonal,
    Householder vectors below it, and their scales ``taus`` (n-1)."""
    a = _matrices("hessenberg", a)
    n = a.shape[-1]

    def reduce(m: np.ndarray) -> tuple:
        packed, taus, _ = _lapack("gehrd", m)(m)
        return packed, taus
    return list(_on_host(reduce, [a.dtype, a.dtype], [(n, n), (max(n - 1, 0),)], a))


def tridiagonal(a: Any, *, lower: bool = True) -> list[Any]:
    """``[a, d, e, taus]``: the reduction of Hermitian matrices to real
    symmetric tridiagonal form in LAPACK's packed form (``sytrd``/``hetrd``,
    from the ``lower`` or upper triangle): diagonal ``d``, off-diagonal ``e``,
    reflector scales ``taus``."""
    a = _matrices("tridiagonal", a)
    n, dt = a.shape[-1], np.dtype(a.dtype)
    name = "hetrd" if np.issubdtype(dt, np.complexfloating) else "sytrd"

    def reduce(m: np.ndarray) -> tuple:
        packed, d, e, taus, _ = _lapack(name, m)(m, lower=int(lower))
        return packed, d, e, taus
    m1 = max(n - 1, 0)
    return list(_on_host(reduce, [dt, _real_of(dt), _real_of(dt), dt],
                         [(n, n), (n,), (m1,), (m1,)], a))


# -- Householder reflectors -------------------------------------------------------------------

def _reflector(a: Any, i: int) -> Any:
    """The i-th Householder vector packed in ``a``'s column i: 1 at row i, the
    column below it."""
    rows = np.arange(a.shape[-2])
    unit = (rows == i).astype(np.dtype(a.dtype))
    return xnp.where(rows > i, a[..., :, i], unit)


def _reflect(c: Any, v: Any, tau: Any, left: bool) -> Any:
    """``(I - tau v v^H) c`` (``left``) or ``c (I - tau v v^H)``."""
    tau = tau[..., None, None]
    if left:
        projection = xnp.einsum("...m,...mn->...n", xnp.conj(v), c)
        return c - tau * v[..., :, None] * projection[..., None, :]
    projection = xnp.einsum("...nm,...m->...n", c, v)
    return c - tau * projection[..., :, None] * xnp.conj(v)[..., None, :]


def _check_reflectors(fn: str, a: Any, taus: Any) -> int:
    m, n = a.shape[-2:]
    if m < n:
        raise ValueError(f"lax.linalg.{fn}: a must have at least as many rows as columns, "
                         f"got shape {tuple(a.shape)}")
    k = taus.shape[-1]
    if k > n or taus.shape[:-1] != a.shape[:-2]:
        raise ValueError(f"lax.linalg.{fn}: taus must have shape {tuple(a.shape[:-2])} + (k,) "
                         f"with k <= {n}, got {tuple(taus.shape)}")
    return k


def householder_product(a: Any, taus: Any) -> Any:
    """The first ``n`` columns of ``Q = H_0 H_1 ... H_(k-1)``, ``H_i = I - taus_i
    v_i v_i^H`` with ``v_i`` packed below ``a``'s diagonal (LAPACK's ``orgqr``)."""
    a = _matrices("householder_product", a, square=False)
    taus = xnp.asarray(taus).astype(a.dtype)
    k = _check_reflectors("householder_product", a, taus)
    m, n = a.shape[-2:]
    q = xnp.broadcast_to(xnp.eye(m, n, dtype=a.dtype), a.shape)
    for i in reversed(range(k)):
        q = _reflect(q, _reflector(a, i), taus[..., i], left=True)
    return q


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``Q c``, ``Q^H c``, ``c Q`` or ``c Q^H`` (``left``, ``transpose``) with
    ``Q`` the product of :func:`householder_product`'s reflectors (m x m)."""
    a = _matrices("ormqr", a, square=False)
    taus = xnp.asarray(taus).astype(a.dtype)
    c = xnp.asarray(c).astype(a.dtype)
    k = _check_reflectors("ormqr", a, taus)
    if c.shape[-2 if left else -1] != a.shape[-2]:
        raise ValueError(f"lax.linalg.ormqr: c of shape {tuple(c.shape)} does not match Q of "
                         f"size {a.shape[-2]} on the {'left' if left else 'right'}")
    order = range(k) if left == transpose else reversed(range(k))
    for i in order:
        tau = xnp.conj(taus[..., i]) if transpose else taus[..., i]
        c = _reflect(c, _reflector(a, i), tau, left)
    return c


# -- LU pivots, Cholesky update, symmetric product, tridiagonal solve --------------------------

def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation (int32, ``permutation_size``) that LAPACK's row swaps
    ``pivots`` (..., k) make: row i swapped with row ``pivots[i]``, in turn."""
    pivots = xnp.asarray(pivots)
    if not np.issubdtype(np.dtype(pivots.dtype), np.integer):
        raise TypeError(f"lax.linalg.lu_pivots_to_permutation: pivots must be integers, got "
                        f"{pivots.dtype}")
    k = pivots.shape[-1] if pivots.ndim else 0
    if pivots.ndim < 1 or k > permutation_size:
        raise ValueError(f"lax.linalg.lu_pivots_to_permutation: pivots must have shape (..., k) "
                         f"with k <= permutation_size ({permutation_size}), got "
                         f"{tuple(pivots.shape)}")
    pivots = pivots.astype(np.int32)
    positions = np.arange(permutation_size, dtype=np.int32)
    perm = xnp.broadcast_to(positions, pivots.shape[:-1] + (permutation_size,))
    for i in range(k):
        p = pivots[..., i:i + 1]
        at_i, at_p = perm[..., i:i + 1], xnp.take_along_axis(perm, p, axis=-1)
        perm = xnp.where(positions == i, at_p, xnp.where(positions == p, at_i, perm))
    return perm


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The upper Cholesky factor of ``R^T R + w w^T`` from that of ``R^T R``
    (a rank-one update by Givens rotations, row by row)."""
    r = _matrices("cholesky_update", r_matrix)
    w = xnp.asarray(w_vector).astype(r.dtype)
    n = r.shape[-1]
    if w.shape != r.shape[:-1]:
        raise ValueError(f"lax.linalg.cholesky_update: w_vector must have shape "
                         f"{tuple(r.shape[:-1])}, got {tuple(w.shape)}")
    columns = np.arange(n)
    for k in range(n):
        row, rkk, wk = r[..., k, :], r[..., k, k:k + 1], w[..., k:k + 1]
        radius = xnp.sqrt(rkk * rkk + wk * wk)
        cos, sin = radius / rkk, wk / rkk
        new_row = xnp.where(columns > k, (row + sin * w) / cos,
                            xnp.where(columns == k, radius, row))
        w = xnp.where(columns > k, cos * w - sin * new_row, w)
        r = xnp.where((columns == k)[:, None], new_row[..., None, :], r)
    return r


def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False) -> Any:
    """``alpha a a^T + beta c``; ``symmetrize_output`` mirrors the lower
    triangle onto the upper."""
    a = _matrices("symmetric_product", a_matrix, square=False)
    c = _matrices("symmetric_product", c_matrix)
    out = alpha * xnp.matmul(a, xnp.swapaxes(a, -1, -2)) + beta * c
    if symmetrize_output:
        lower = xnp.tril(out)
        out = lower + xnp.swapaxes(xnp.tril(out, -1), -1, -2)
    return out


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False
                      ) -> Any:
    """``x`` with ``T x = b`` for the tridiagonal ``T`` of sub-diagonal ``dl``
    (``dl[0]`` unused), diagonal ``d`` and super-diagonal ``du`` (``du[-1]``
    unused), all (..., m), and ``b`` (..., m, n): the Thomas algorithm (no
    pivoting), two scans.  ``perturb_singular`` replaces zero pivots by a
    tiny multiple of the matrix's scale instead of dividing by zero."""
    from . import control_flow
    from numxla.scipy._util import promote_inexact
    dl, d, du, b = promote_inexact(dl, d, du, b)
    if b.ndim < 2 or not dl.shape == d.shape == du.shape == b.shape[:-1]:
        raise ValueError(f"lax.linalg.tridiagonal_solve: dl, d, du must have shape (..., m) "
                         f"and b (..., m, n) with the same (..., m); got {tuple(dl.shape)}, "
                         f"{tuple(d.shape)}, {tuple(du.shape)}, {tuple(b.shape)}")
    tiny = None
    if perturb_singular:
        scale = xnp.max(xnp.abs(dl) + xnp.abs(d) + xnp.abs(du), axis=-1)
        tiny = scale * np.finfo(_real_of(np.dtype(d.dtype))).eps

    def forward(carry: tuple, row: tuple) -> tuple:
        c_prev, y_prev = carry
        dl_i, d_i, du_i, b_i = row
        pivot = d_i - dl_i * c_prev
        if tiny is not None:
            pivot = xnp.where(pivot == 0, tiny.astype(pivot.dtype), pivot)
        c_i = du_i / pivot
        y_i = (b_i - dl_i[..., None] * y_prev) / pivot[..., None]
        return (c_i, y_i), (c_i, y_i)

    def backward(x_next: Any, row: tuple) -> tuple:
        c_i, y_i = row
        x_i = y_i - c_i[..., None] * x_next
        return x_i, x_i

    rows = (xnp.moveaxis(dl, -1, 0), xnp.moveaxis(d, -1, 0), xnp.moveaxis(du, -1, 0),
            xnp.moveaxis(b, -2, 0))
    init = (xnp.zeros_like(rows[1][0]), xnp.zeros_like(rows[3][0]))
    _, (cs, ys) = control_flow.scan(forward, init, rows)
    _, xs = control_flow.scan(backward, xnp.zeros_like(rows[3][0]), (cs, ys), reverse=True)
    return xnp.moveaxis(xs, 0, -2)


# -- QDWH polar decomposition -----------------------------------------------------------------

def _qdwh_schedule(lower_bound: float, tol: float, max_iterations: int) -> list[tuple]:
    """The weights ``(a, b, c)`` of each QDWH step for a smallest singular value
    bounded below by ``lower_bound`` (they depend on the bound alone), up to
    the step that brings the bound within ``tol`` of 1."""
    steps, ell = [], lower_bound
    while len(steps) < max_iterations and abs(1 - ell) > tol:
        ell2 = ell * ell
        gamma = (4 * (1 - ell2) / (ell2 * ell2)) ** (1 / 3)
        a = float(np.sqrt(1 + gamma) + 0.5 * np.sqrt(
            8 - 4 * gamma + 8 * (2 - ell2) / (ell2 * np.sqrt(1 + gamma))))
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        steps.append((a, b, c))
        ell = min(1.0, ell * (a + b * ell2) / (1 + c * ell2))
    return steps


def qdwh(x: Any, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None) -> tuple:
    """``(u, h, num_iters, is_converged)``: the polar decomposition ``x = u h``
    (``u`` with orthonormal columns, ``h`` Hermitian positive semi-definite)
    of matrices with at least as many rows as columns, by the dynamically
    weighted Halley iteration (Nakatsukasa, Bai and Gygi): QR-based steps
    while the weight ``c`` is large, Cholesky-based ones after."""
    if dynamic_shape is not None:
        raise NotImplementedError("lax.linalg.qdwh: dynamic_shape is not supported")
    x = _matrices("qdwh", x, square=False)
    m, n = x.shape[-2:]
    if m < n:
        raise ValueError(f"lax.linalg.qdwh: x must have at least as many rows as columns, got "
                         f"shape {tuple(x.shape)}")
    dt = np.dtype(x.dtype)
    eps = float(np.finfo(_real_of(dt)).eps) if eps is None else float(eps)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    steps = _qdwh_schedule(eps, 10 * eps, max_iterations)
    norm = xnp.sqrt(xnp.sum(xnp.abs(x) ** 2, axis=(-2, -1), keepdims=True))
    u = x / xnp.where(norm == 0, 1, norm).astype(dt)
    eye = xnp.broadcast_to(xnp.eye(n, dtype=dt), x.shape[:-2] + (n, n))
    previous = u
    for a, b, c in steps:
        previous = u
        if c > 100:   # [sqrt(c) u; I] = [q1; q2] r
            q, _ = xnp.linalg.qr(xnp.concatenate([c ** 0.5 * u, eye], axis=-2))
            mixed = xnp.matmul(q[..., :m, :], _mH(q[..., m:, :])) / c ** 0.5
        else:         # u (I + c u^H u)^-1 through the Cholesky factor of I + c u^H u
            chol = xnp.linalg.cholesky(eye + c * xnp.matmul(_mH(u), u))
            half = triangular_solve(chol, u, left_side=False, lower=True, transpose_a=True,
                                    conjugate_a=True)
            mixed = triangular_solve(chol, half, left_side=False, lower=True)
        u = (b / c) * u + (a - b / c) * mixed
    h = xnp.matmul(_mH(u), x)
    h = (h + _mH(h)) / 2
    change = xnp.sqrt(xnp.sum(xnp.abs(u - previous) ** 2))
    size = xnp.sqrt(xnp.sum(xnp.abs(u) ** 2))
    converged = (change <= size * (4 * eps) ** (1 / 3)) | (len(steps) < max_iterations)
    converged = converged & xnp.all(xnp.isfinite(u))
    return u, h, xnp.asarray(len(steps)), converged
