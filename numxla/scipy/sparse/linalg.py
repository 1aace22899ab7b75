"""``jax.scipy.sparse.linalg``: the Krylov solvers ``cg``, ``bicgstab`` and
``gmres`` for ``A x = b``, with ``A`` a matrix, a function ``x -> A x`` or
an object with ``@``, and ``b`` an array or a pytree of arrays.

Each returns ``(x, None)`` (JAX's placeholder for convergence information)
and stops once the residual's norm is at most ``max(tol * norm(b), atol)``
(norms over all of ``b``'s leaves; for ``gmres`` the preconditioned
residual) or after ``maxiter`` iterations.  The iterations run in
``lax.while_loop`` on the leaves raveled into one vector, so the solvers
work eagerly and under ``jit``; they are differentiated by
``lax.custom_linear_solve`` (by solving again with ``A`` or its transpose),
never through their iterations.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as jnp
from numxla.autodiff.reverse import vjp
from numxla.flatten_util import ravel_pytree
from numxla.tracer import pytree
from numxla.tracer.core import abstractify

__all__ = ["cg", "bicgstab", "gmres"]

Operator = Callable[[Any], Any]


def _operator(where: str, name: str, A: Any) -> Operator:
    """``A`` as a function: a function is itself, a square matrix multiplies."""
    if callable(A):
        return A
    if hasattr(A, "shape") and hasattr(A, "dtype"):
        if len(A.shape) != 2 or A.shape[0] != A.shape[1]:
            raise ValueError(f"{where}: {name} must be a square matrix, got shape "
                             f"{tuple(A.shape)}")
        return lambda x: jnp.matmul(A, x)
    if hasattr(A, "__matmul__"):
        return lambda x: A @ x
    raise TypeError(f"{where}: {name} must be a matrix, a function or an object with @, got "
                    f"{type(A).__name__}")


def _transposed(op: Operator, like: Any) -> Operator:
    """The transpose of the linear map ``op`` (on vectors shaped like ``like``)."""
    zeros = pytree.tree_map(lambda x: np.zeros(np.shape(x), abstractify(x).dtype), like)
    return lambda u: vjp(op, zeros)[1](u)[0]


def _norm2(v: Any) -> Any:
    return jnp.real(jnp.vdot(v, v))


def _safe_divide(num: Any, den: Any) -> Any:
    """``num / den``, 0 where ``den`` is 0 (a breakdown the loop then stops on)."""
    zero = den == 0
    return jnp.where(zero, 0, num / jnp.where(zero, 1, den))


# --------------------------------------------------------------------------
# the iterations, on vectors
# --------------------------------------------------------------------------

def _cg(A: Operator, b: Any, x0: Any, M: Operator, threshold2: Any, maxiter: int) -> Any:
    """Preconditioned conjugate gradients (``A`` Hermitian positive definite)."""
    r = b - A(x0)
    z = M(r)
    p = z

    def unconverged(state):
        _, r, _, _, k = state
        return (_norm2(r) > threshold2) & (k < maxiter)

    def iterate(state):
        x, r, gamma, p, k = state
        ap = A(p)
        alpha = _safe_divide(gamma, jnp.vdot(p, ap))
        x, r = x + alpha * p, r - alpha * ap
        z = M(r)
        gamma_new = jnp.vdot(r, z)
        return x, r, gamma_new, z + _safe_divide(gamma_new, gamma) * p, k + 1

    return lax.while_loop(unconverged, iterate, (x0, r, jnp.vdot(r, z), p, jnp.int32(0)))[0]


def _bicgstab(A: Operator, b: Any, x0: Any, M: Operator, threshold2: Any, maxiter: int) -> Any:
    """Preconditioned BiCGSTAB; it stops half way through an iteration once
    ``s`` (the residual after the ``alpha`` step) is small enough, and on a
    breakdown (``rho`` or ``omega`` 0)."""
    r = b - A(x0)
    r_hat = r
    one = jnp.ones((), b.dtype)

    def unconverged(state):
        _, r, *_, k, ok = state
        return (_norm2(r) > threshold2) & (k < maxiter) & ok

    def iterate(state):
        x, r, rho, alpha, omega, v, p, k, _ = state
        rho_new = jnp.vdot(r_hat, r)
        beta = _safe_divide(rho_new, rho) * _safe_divide(alpha, omega)
        p = r + beta * (p - omega * v)
        p_hat = M(p)
        v = A(p_hat)
        alpha = _safe_divide(rho_new, jnp.vdot(r_hat, v))
        s = r - alpha * v
        half_done = _norm2(s) <= threshold2   # converged half way: x + alpha p_hat
        s_hat = M(s)
        t = A(s_hat)
        omega = jnp.where(half_done, 0, _safe_divide(jnp.vdot(t, s), jnp.vdot(t, t)))
        x = x + alpha * p_hat + omega * s_hat
        r = s - omega * t
        ok = (rho_new != 0) & ((omega != 0) | half_done)
        return x, r, rho_new, alpha, omega, v, p, k + 1, ok

    zeros = jnp.zeros_like(b)
    state = (x0, r, one, one, one, zeros, zeros, jnp.int32(0), jnp.bool_(True))
    return lax.while_loop(unconverged, iterate, state)[0]


def _gmres(A: Operator, b: Any, x0: Any, M: Operator, threshold2: Any, maxiter: int,
           restart: int, incremental: bool) -> Any:
    """Restarted GMRES, left-preconditioned (``M A x = M b``): each cycle builds an orthonormal Krylov basis (Gram–Schmidt, twice) and keeps
    the least-squares problem triangular with Givens rotations, whose last
    entry is the residual's norm; the cycle ends at ``restart`` vectors, on a
    breakdown (the residual is then 0) or, if ``incremental``, once that norm
    is small enough."""
    n = b.shape[0]
    m = max(min(restart, n), 1)
    cycle_threshold = jnp.sqrt(threshold2) if incremental else 0.0
    rows = jnp.arange(m + 1)

    def arnoldi_step(state):
        V, R, cs, sn, g, j = state
        w = M(A(V[j]))
        h = jnp.zeros((m + 1,), b.dtype)
        for _ in range(2):   # Gram–Schmidt against the basis so far, repeated for accuracy
            coeffs = jnp.where(rows <= j, jnp.conj(V) @ w, 0)
            w = w - coeffs @ V
            h = h + coeffs
        h_next = jnp.sqrt(_norm2(w))
        V = V.at[j + 1].set(jnp.where(h_next > 0, w / jnp.where(h_next > 0, h_next, 1), 0))
        h = h.at[j + 1].set(h_next.astype(b.dtype))

        def rotate(i, h):   # the earlier rotations, on rows (i, i+1)
            hi, hi1 = h[i], h[i + 1]
            rotated = h.at[i].set(jnp.conj(cs[i]) * hi + jnp.conj(sn[i]) * hi1)
            rotated = rotated.at[i + 1].set(-sn[i] * hi + cs[i] * hi1)
            return jnp.where(i < j, rotated, h)

        h = lax.fori_loop(0, m, rotate, h)
        a, c = h[j], h[j + 1]
        radius = jnp.sqrt(jnp.abs(a) ** 2 + jnp.abs(c) ** 2).astype(b.dtype)
        safe = jnp.where(radius == 0, 1, radius)
        cos, sin = jnp.where(radius == 0, 1, a / safe), jnp.where(radius == 0, 0, c / safe)
        h = h.at[j].set(radius).at[j + 1].set(0)
        g = g.at[j + 1].set(-sin * g[j]).at[j].set(jnp.conj(cos) * g[j])
        return V, R.at[:, j].set(h[:m]), cs.at[j].set(cos), sn.at[j].set(sin), g, j + 1

    def cycle_unfinished(state):
        *_, g, j = state
        return (j < m) & (jnp.abs(g[j]) > cycle_threshold)

    def unconverged(state):
        _, residual2, k = state
        return (residual2 > threshold2) & (k < maxiter)

    def cycle(state):
        x, _, k = state
        r = M(b - A(x))
        beta = jnp.sqrt(_norm2(r))
        V = jnp.zeros((m + 1, n), b.dtype).at[0].set(r / jnp.where(beta > 0, beta, 1))
        g = jnp.zeros((m + 1,), b.dtype).at[0].set(beta.astype(b.dtype))
        start = (V, jnp.zeros((m, m), b.dtype), jnp.zeros((m,), b.dtype),
                 jnp.zeros((m,), b.dtype), g, jnp.int32(0))
        V, R, _, _, g, j = lax.while_loop(cycle_unfinished, arnoldi_step, start)
        used = jnp.arange(m) < j   # solve on the basis vectors built, the identity elsewhere
        R = jnp.where(used[:, None] & used[None, :], R, jnp.eye(m, dtype=b.dtype))
        y = lax.triangular_solve(R, jnp.where(used, g[:m], 0)[:, None], left_side=True,
                                 lower=False)[:, 0]
        x = x + y @ V[:m]
        return x, _norm2(M(b - A(x))), k + 1

    return lax.while_loop(unconverged, cycle, (x0, _norm2(M(b - A(x0))), jnp.int32(0)))[0]


# --------------------------------------------------------------------------
# the solvers
# --------------------------------------------------------------------------

def _solve(where: str, iterate: Callable[..., Any], A: Any, b: Any, x0: Any, tol: Any,
           atol: Any, maxiter: int | None, M: Any, symmetric: bool) -> tuple[Any, None]:
    matvec = _operator(where, "A", A)
    precondition = (lambda x: x) if M is None else _operator(where, "M", M)
    b = pytree.tree_map(jnp.asarray, b)
    x0 = pytree.tree_map(jnp.zeros_like, b) if x0 is None else pytree.tree_map(jnp.asarray, x0)
    if pytree.tree_structure(x0) != pytree.tree_structure(b) or \
            [x.shape for x in pytree.tree_leaves(x0)] != [x.shape for x in pytree.tree_leaves(b)]:
        raise ValueError(f"{where}: x0 and b must have the same structure and shapes, got "
                         f"{pytree.tree_structure(x0)} and {pytree.tree_structure(b)}")
    b_flat, _ = ravel_pytree(b)
    maxiter = 10 * b_flat.shape[0] if maxiter is None else int(maxiter)

    def on_vectors(op: Operator, unravel: Callable, dtype: Any) -> Operator:
        return lambda v: ravel_pytree(op(unravel(v)))[0].astype(dtype)

    def solve_with(precond: Operator) -> Callable[[Operator, Any], Any]:
        def solve(op: Operator, rhs: Any) -> Any:
            r, unravel = ravel_pytree(rhs)
            start = ravel_pytree(x0)[0].astype(r.dtype)
            threshold = jnp.maximum(tol * jnp.sqrt(_norm2(r)), atol)
            x = iterate(on_vectors(op, unravel, r.dtype), r, start,
                        on_vectors(precond, unravel, r.dtype), threshold ** 2, maxiter)
            return unravel(x)
        return solve

    transpose_solve = None if symmetric else solve_with(
        precondition if M is None else _transposed(precondition, b))
    x = lax.custom_linear_solve(matvec, b, solve_with(precondition),
                                transpose_solve=transpose_solve, symmetric=symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """``A x = b`` for Hermitian positive definite ``A`` by conjugate gradients;
    ``M`` approximates ``A``'s inverse (a preconditioner); ``maxiter``
    defaults to 10 times ``b``'s size.  Returns ``(x, None)``."""
    return _solve("cg", _cg, A, b, x0, tol, atol, maxiter, M, symmetric=True)


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """``A x = b`` for a general square ``A`` by BiCGSTAB; ``M`` approximates
    ``A``'s inverse; ``maxiter`` defaults to 10 times ``b``'s size.  Returns
    ``(x, None)``."""
    return _solve("bicgstab", _bicgstab, A, b, x0, tol, atol, maxiter, M, symmetric=False)


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched") -> tuple[Any, None]:
    """``A x = b`` for a general square ``A`` by GMRES restarted every
    ``restart`` iterations, at most ``maxiter`` cycles (default: 10 times
    ``b``'s size); ``M`` approximates ``A``'s inverse, applied on the left
    (the residual tested is ``M(b - A x)``).  With ``solve_method="batched"``
    every cycle builds its whole basis; ``"incremental"`` ends a cycle as
    soon as its residual is small enough.  Returns ``(x, None)``."""
    if solve_method not in ("incremental", "batched"):
        raise ValueError(f"gmres: solve_method must be 'incremental' or 'batched', got "
                         f"{solve_method!r}")
    if int(restart) < 1:
        raise ValueError(f"gmres: restart must be at least 1, got {restart}")

    def iterate(A, b, x0, M, threshold2, maxiter):
        return _gmres(A, b, x0, M, threshold2, maxiter, int(restart),
                      solve_method == "incremental")
    return _solve("gmres", iterate, A, b, x0, tol, atol, maxiter, M, symmetric=False)
