"""More of ``jax.scipy.linalg``: the polar decomposition and ``expm_frechet``
(on the op set, differentiable), ``eigh_tridiagonal``, ``qr_multiply`` and
``funm``, and the Schur-based functions (``schur``, ``rsf2csf``,
``hessenberg``, ``sqrtm``, ``solve_sylvester``), which, as JAX's on CPU, run
LAPACK on the host (through SciPy: eagerly, under ``jit`` as a host
callback, under ``vmap`` once per matrix; no derivative)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import numxla.primitives.numpy as xnp
import numxla.primitives.numpy.linalg as la

from ._util import promote_inexact
from .linalg import expm

__all__ = ["polar", "expm_frechet", "eigh_tridiagonal", "qr_multiply", "funm", "schur",
           "rsf2csf", "hessenberg", "sqrtm", "solve_sylvester"]


def _complex_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex128 if dtype in (np.float64, np.complex128) else np.complex64)


def _on_host(fn: Callable[..., Any], out_dtypes: list[np.dtype], out_shapes: list[tuple],
             *arrays: Any) -> Any:
    """``fn`` (NumPy in, a tuple of NumPy arrays out) on the host, once per
    matrix of a batch: ``arrays`` share leading batch dimensions before their
    last two."""
    from numxla._api import ShapeDtypeStruct, pure_callback
    batch = arrays[0].shape[:-2]

    def host(*values: np.ndarray) -> tuple:
        flat = [np.asarray(v).reshape((-1,) + np.shape(v)[len(batch):]) for v in values]
        results = [fn(*(f[i] for f in flat)) for i in range(flat[0].shape[0])]
        return tuple(np.stack([r[k] for r in results]).astype(d).reshape(batch + s)
                     for k, (d, s) in enumerate(zip(out_dtypes, out_shapes)))
    specs = tuple(ShapeDtypeStruct(batch + s, d) for d, s in zip(out_dtypes, out_shapes))
    return pure_callback(host, specs, *arrays)


def polar(a: Any, side: str = "right", *, method: str = "svd", eps: Any = None,
          max_iterations: Any = None) -> tuple[Any, Any]:
    """``(u, p)`` with ``u`` unitary and ``p`` positive semi-definite:
    ``a = u p`` (``side='right'``) or ``a = p u`` (``'left'``), from an SVD
    (whatever ``method`` names)."""
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    (a,) = promote_inexact(a)
    u_svd, s, vh = la.svd(a, full_matrices=False)
    unitary = u_svd @ vh
    if side == "right":
        v = xnp.conj(xnp.swapaxes(vh, -1, -2))
        return unitary, (v * s[..., None, :]) @ vh
    return unitary, (u_svd * s[..., None, :]) @ xnp.conj(xnp.swapaxes(u_svd, -1, -2))


def expm_frechet(A: Any, E: Any, *, method: str | None = None, compute_expm: bool = True
                 ) -> Any:
    """The Frechet derivative of ``expm`` at ``A`` in direction ``E``
    (and ``expm(A)`` first, with ``compute_expm``): the top-right block of
    ``expm([[A, E], [0, A]])``."""
    A, E = promote_inexact(A, E)
    n = A.shape[-1]
    top = xnp.concatenate([A, E], axis=-1)
    bottom = xnp.concatenate([xnp.zeros_like(A), A], axis=-1)
    big = expm(xnp.concatenate([top, bottom], axis=-2))
    frechet = big[..., :n, n:]
    return (big[..., :n, :n], frechet) if compute_expm else frechet


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: Any = None, tol: Any = None, key: Any = None) -> Any:
    """Eigenvalues (ascending), and eigenvectors unless ``eigvals_only``, of the
    symmetric tridiagonal matrix with diagonal ``d`` and off-diagonal ``e``.
    ``select='i'`` keeps the eigenvalues with indices ``select_range[0] ..
    select_range[1]`` (inclusive)."""
    d, e = promote_inexact(d, e)
    t = xnp.diag(d) + xnp.diag(e, 1) + xnp.diag(xnp.conj(e), -1)
    w, v = la.eigh(t)
    if select == "i":
        lo, hi = (int(i) for i in select_range)
        w, v = w[lo:hi + 1], v[:, lo:hi + 1]
    elif select != "a":
        raise NotImplementedError(f"eigh_tridiagonal: select={select!r} (value ranges have "
                                  f"data-dependent sizes); use 'a' or 'i'")
    return w if eigvals_only else (w, v)


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False, overwrite_c: bool = False
                ) -> tuple[Any, Any]:
    """``(c @ q, r)`` (``mode='right'``) or ``(q @ c, r)`` (``'left'``) with
    ``q, r`` the economic QR of ``a``; ``conjugate`` uses ``conj(q)``."""
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting is not supported")
    a, c = promote_inexact(a, c)
    q, r = la.qr(a, mode="reduced")
    q = xnp.conj(q) if conjugate else q
    vector = c.ndim == 1
    if mode == "right":
        out = (c[None, :] if vector else c) @ q
    elif mode == "left":
        out = q @ (c[:, None] if vector else c)
    else:
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    return (out.ravel() if vector else out), r


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:
    """``func`` of the matrix ``A`` (complex), through its eigendecomposition
    ``V diag(func(w)) V^-1``: ``func`` maps eigenvalues element-wise.  For
    diagonalisable ``A``."""
    (A,) = promote_inexact(A)
    w, v = la.eig(A)
    out = (v * func(w)[..., None, :]) @ la.inv(v)
    return out if disp else (out, xnp.zeros((), out.real.dtype))


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """``(T, Z)`` with ``a = Z T Z^H``, ``T`` quasi-upper-triangular
    (``'real'``) or upper triangular (``'complex'``)."""
    import scipy.linalg
    if output not in ("real", "complex"):
        raise ValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    (a,) = promote_inexact(a)
    dt = a.dtype if output == "real" else _complex_of(a.dtype)
    n = a.shape[-1]
    return _on_host(lambda m: scipy.linalg.schur(m, output=output), [dt, dt],
                    [(n, n), (n, n)], a)


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """The complex Schur form ``(T, Z)`` from the real one."""
    import scipy.linalg
    T, Z = promote_inexact(T, Z)
    dt, n = _complex_of(T.dtype), T.shape[-1]
    return _on_host(scipy.linalg.rsf2csf, [dt, dt], [(n, n), (n, n)], T, Z)


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """The upper Hessenberg form ``H`` of ``a`` (and ``Q`` with ``a = Q H Q^H``)."""
    import scipy.linalg
    (a,) = promote_inexact(a)
    n = a.shape[-1]
    if calc_q:
        return _on_host(lambda m: scipy.linalg.hessenberg(m, calc_q=True), [a.dtype, a.dtype],
                        [(n, n), (n, n)], a)
    return _on_host(lambda m: (scipy.linalg.hessenberg(m),), [a.dtype], [(n, n)], a)[0]


def sqrtm(A: Any, blocksize: int = 1) -> Any:
    """The principal square root of ``A`` (complex, as JAX's), Schur-based."""
    import scipy.linalg
    (A,) = promote_inexact(A)
    n = A.shape[-1]
    return _on_host(lambda m: (scipy.linalg.sqrtm(m.astype(_complex_of(m.dtype))),),
                    [_complex_of(A.dtype)], [(n, n)], A)[0]


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur", tol: float = 1e-8
                    ) -> Any:
    """``X`` with ``A X + X B = C``."""
    import scipy.linalg
    A, B, C = promote_inexact(A, B, C)
    return _on_host(lambda a, b, c: (scipy.linalg.solve_sylvester(a, b, c),), [C.dtype],
                    [C.shape[-2:]], A, B, C)[0]
