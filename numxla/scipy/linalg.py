"""``jax.scipy.linalg`` for numxla: SciPy's names over the op set.

Cholesky solves (``cho_factor``/``cho_solve``), triangular solves
(``solve_triangular``, XLA's TriangularSolve), LU (``lu``, ``lu_factor``,
``lu_solve``), ``solve`` with ``assume_a``, and the decompositions and
inverses ``jax.numpy.linalg`` already has, with SciPy's argument spellings.
Everything works eagerly, under ``jit``, ``vmap`` and differentiation.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
import numxla.primitives.numpy.linalg as la
from numxla.primitives import elementwise as ew
from numxla.primitives import shape_ops
from numxla.primitives.fft_linalg import triangular_solve
from numxla.primitives.numpy import _decompositions as dec
from numxla.primitives.numpy._core import _arraylike, _to_inexact

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "solve", "inv", "det",
           "lu", "lu_factor", "lu_solve", "qr", "svd", "eigh", "eigvalsh", "block_diag", "expm",
           "pinv", "norm"]

det = la.det
pinv = la.pinv
norm = la.norm


def _inexact(*xs: Any) -> list[Any]:
    return list(ew.promote(*(_to_inexact(_arraylike(x)) for x in xs)))


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True
             ) -> Any:
    """SciPy's Cholesky: upper triangular ``U`` with ``a = U^H U`` unless ``lower``."""
    return la.cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """``(c, lower)`` for :func:`cho_solve`."""
    return cholesky(a, lower=lower), lower


def _vector_rhs(b: Any) -> tuple[Any, bool]:
    """``b`` as (..., M, K): a 1-D ``b`` becomes a column."""
    if xnp.ndim(b) == 1:
        return xnp.reshape(b, (-1, 1)), True
    return b, False


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """``x`` with ``a @ x = b`` from ``cho_factor(a)``."""
    c, lower = c_and_lower
    c, b = _inexact(c, b)
    b, vector = _vector_rhs(b)
    c = xnp.broadcast_to(c, xnp.shape(b)[:-2] + xnp.shape(c)[-2:])
    # a = L L^H: solve L y = b, then L^H x = y (with U = L^H when not lower)
    y = triangular_solve(c, b, left_side=True, lower=lower,
                         transpose_a=False if lower else "ADJOINT")
    x = triangular_solve(c, y, left_side=True, lower=lower,
                         transpose_a="ADJOINT" if lower else False)
    return xnp.reshape(x, xnp.shape(x)[:-1]) if vector else x


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Any:
    """``x`` with ``op(a) @ x = b`` for triangular ``a``; ``trans`` 0/'N', 1/'T'
    or 2/'C' (conjugate transpose); a 1-D ``b`` is a vector."""
    transpose = {0: False, "N": False, 1: "TRANSPOSE", "T": "TRANSPOSE", 2: "ADJOINT",
                 "C": "ADJOINT"}.get(trans)
    if transpose is None and trans not in (0, "N"):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    a, b = _inexact(a, b)
    b, vector = _vector_rhs(b)
    batch = xnp.broadcast_shapes(xnp.shape(a)[:-2], xnp.shape(b)[:-2])
    a = xnp.broadcast_to(a, batch + xnp.shape(a)[-2:])
    b = xnp.broadcast_to(b, batch + xnp.shape(b)[-2:])
    x = triangular_solve(a, b, left_side=True, lower=lower, unit_diagonal=unit_diagonal,
                         transpose_a=transpose)
    return xnp.reshape(x, xnp.shape(x)[:-1]) if vector else x


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    """``x`` with ``a @ x = b``; ``assume_a="pos"`` solves by Cholesky (reading
    the ``lower`` or upper triangle), anything else by LU."""
    if assume_a == "pos":
        a = _inexact(a)[0]
        a = xnp.where(_triangle_mask(a, lower), a, dec.mH(a))
        return cho_solve(cho_factor(a, lower=True), b)
    return la.solve(a, b)


def _triangle_mask(a: Any, lower: bool) -> Any:
    n = xnp.shape(a)[-1]
    rows, cols = np.indices((n, n))
    return (rows >= cols) if lower else (rows <= cols)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return la.inv(a)


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True
              ) -> tuple[Any, Any]:
    """``(lu, piv)``: LU factors packed in one matrix and LAPACK's pivots."""
    (a,) = _inexact(a)
    packed, pivots, _ = dec.lu(a)
    return packed, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """``x`` with ``a @ x = b`` (``trans`` 1: ``a^T``, 2: ``a^H``) from :func:`lu_factor`."""
    packed, pivots = lu_and_piv
    packed, b = _inexact(packed, b)
    b, vector = _vector_rhs(b)
    m = xnp.shape(packed)[-1]
    perm = _permutation(pivots, m)
    if trans == 0:
        y = triangular_solve(packed, b[..., perm, :], left_side=True, lower=True,
                             unit_diagonal=True)
        x = triangular_solve(packed, y, left_side=True, lower=False)
    else:
        t = "TRANSPOSE" if trans == 1 else "ADJOINT"
        y = triangular_solve(packed, b, left_side=True, lower=False, transpose_a=t)
        z = triangular_solve(packed, y, left_side=True, lower=True, unit_diagonal=True,
                             transpose_a=t)
        x = xnp.zeros_like(z).at[..., perm, :].set(z)
    return xnp.reshape(x, xnp.shape(x)[:-1]) if vector else x


def _permutation(pivots: Any, m: int) -> Any:
    """The row permutation that LAPACK's row interchanges ``pivots`` make."""
    perm = xnp.arange(m)
    for i in range(xnp.shape(pivots)[-1]):
        p = pivots[..., i]
        pi, pp = perm[i], perm[p]
        perm = perm.at[i].set(pp).at[p].set(pi)
    return perm


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True
       ) -> tuple[Any, ...]:
    """``(p, l, u)`` with ``a = p @ l @ u`` (``(p @ l, u)`` if ``permute_l``)."""
    (a,) = _inexact(a)
    packed, _, perm = dec.lu(a)
    lower, upper = dec.lu_unpack(packed)
    m = xnp.shape(a)[-2]
    p = xnp.swapaxes(xnp.asarray(xnp.arange(m) == perm[..., :, None], dtype=xnp.result_type(a)),
                     -1, -2)
    if permute_l:
        return xnp.matmul(p, lower), upper
    return p, lower, upper


def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    """SciPy's QR: ``mode`` "full", "economic" or "r" (a 1-tuple, as SciPy's)."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported")
    if mode == "r":
        return (la.qr(a, mode="complete")[1],)
    return la.qr(a, mode={"full": "complete", "economic": "reduced"}[mode])


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd") -> Any:
    return la.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a real symmetric or complex
    Hermitian matrix (no ``b``)."""
    if b is not None:
        raise NotImplementedError("eigh: the generalized problem (b) is not supported")
    w, v = la.eigh(a, UPLO="L" if lower else "U")
    return w if eigvals_only else (w, v)


def eigvalsh(a: Any, lower: bool = True, **kwargs: Any) -> Any:
    return la.eigvalsh(a, UPLO="L" if lower else "U")


def block_diag(*arrs: Any) -> Any:
    """A block-diagonal matrix of the (at most 2-D) arrays."""
    if not arrs:
        return xnp.zeros((1, 0))
    arrs = [xnp.atleast_2d(a) for a in arrs]
    arrs = list(ew.promote(*arrs))
    rows = sum(xnp.shape(a)[0] for a in arrs)
    cols = sum(xnp.shape(a)[1] for a in arrs)
    out = xnp.zeros((rows, cols), xnp.result_type(arrs[0]))
    r = c = 0
    for a in arrs:
        h, w = xnp.shape(a)
        out = shape_ops.dynamic_update_slice(out, a, (r, c))
        r, c = r + h, c + w
    return out


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:
    """The matrix exponential: a [13/13] Padé approximant with scaling and
    squaring (Higham's, as JAX's), the squarings chosen from the 1-norm."""
    (A,) = _inexact(A)
    n = xnp.shape(A)[-1]
    ident = xnp.eye(n, dtype=xnp.result_type(A))
    b = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
         40840800., 960960., 16380., 182., 1.)
    norm1 = xnp.max(xnp.sum(xnp.abs(A), axis=-2), axis=-1)
    s = xnp.clip(xnp.ceil(xnp.log2(norm1 / 5.371920351148152)), 0, max_squarings)
    s = xnp.where(xnp.isfinite(s), s, 0).astype(xnp.int32)
    A = A / xnp.exp2(s.astype(xnp.result_type(A)))[..., None, None]
    A2 = A @ A
    A4 = A2 @ A2
    A6 = A4 @ A2
    U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2
             + b[1] * ident)
    V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 \
        + b[0] * ident
    R = la.solve(V - U, V + U)

    def square(i: Any, R: Any) -> Any:
        return xnp.where((i < s)[..., None, None], R @ R, R)
    from numxla.primitives.control_flow import fori_loop
    return fori_loop(0, max_squarings, square, R)


# SciPy's special matrices and the decompositions beyond the op set's (``_matrices``,
# ``_linalg_extra``), under this module's names
from ._linalg_extra import *  # noqa: E402,F401,F403
from ._linalg_extra import __all__ as _extra
from ._matrices import *  # noqa: E402,F401,F403
from ._matrices import __all__ as _special

__all__ += _extra + _special
