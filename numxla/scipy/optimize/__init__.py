"""``jax.scipy.optimize.minimize`` with ``method="BFGS"``: quasi-Newton
minimisation of a function of one 1-D array, written with ``lax.while_loop``
so that it runs eagerly and under ``jit``.

Each iteration steps along ``p = -H g`` (``H`` the inverse-Hessian estimate),
with a backtracking line search that halves the step until Armijo's
sufficient-decrease condition ``f(x + a p) <= f(x) + c1 a g.p`` holds, then
updates ``H`` by the BFGS formula when the curvature ``s.y`` is positive
(otherwise ``H`` is kept, which keeps it positive definite).  It stops when
the gradient's infinity norm is below ``gtol`` or after ``maxiter``
iterations.  The path differs from SciPy's and JAX's (they search for the
strong Wolfe conditions), not the minimum they converge to.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as jnp
from numxla.autodiff import value_and_grad

__all__ = ["minimize", "OptimizeResults"]

_ARMIJO_C1 = 1e-4
_LINE_SEARCH_HALVINGS = 30


class OptimizeResults(NamedTuple):
    """SciPy's fields: ``x``, ``success``, ``status`` (0 converged, 1 out of
    iterations, 3 the line search found no decrease), ``fun``, ``jac``,
    ``hess_inv``, ``nfev``, ``njev``, ``nit``."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def _line_search(f_and_g: Callable, x: Any, f: Any, g: Any, p: Any, max_halvings: int):
    """The first step ``a = 2^-k`` (k < ``max_halvings``) meeting Armijo's
    condition: ``(found, a, f_new, g_new, evaluations)``."""
    slope = jnp.vdot(g, p)

    def cond(state):
        k, _, f_new, _ = state
        armijo = f_new <= f + _ARMIJO_C1 * (0.5 ** (k - 1)) * slope
        return (k < max_halvings) & ~(armijo & jnp.isfinite(f_new))

    def body(state):
        k, a, _, _ = state
        f_new, g_new = f_and_g(x + a * p)
        return k + 1, a * 0.5, f_new, g_new

    one = jnp.ones((), x.dtype)
    f1, g1 = f_and_g(x + p)
    k, a, f_new, g_new = lax.while_loop(cond, body, (jnp.int32(1), 0.5 * one, f1, g1))
    step = 2.0 * a  # the step that was evaluated last
    found = (f_new <= f + _ARMIJO_C1 * step * slope) & jnp.isfinite(f_new)
    return found, step, f_new, g_new, k


def _bfgs(fun: Callable, x0: Any, maxiter: int | None, gtol: float, norm: float):
    f_and_g = value_and_grad(fun)
    x0 = jnp.asarray(x0)
    n = x0.shape[0]
    maxiter = 200 * n if maxiter is None else maxiter
    identity = jnp.eye(n, dtype=x0.dtype)
    f0, g0 = f_and_g(x0)

    def gnorm(g):
        return jnp.linalg.norm(g, ord=norm)

    def cond(state):
        k, _, _, g, _, status, *_ = state
        return (k < maxiter) & (gnorm(g) >= gtol) & (status == 0)

    def body(state):
        k, x, f, g, h, status, nfev = state
        p = -(h @ g)
        found, step, f_new, g_new, evals = _line_search(f_and_g, x, f, g, p,
                                                         _LINE_SEARCH_HALVINGS)
        s = step * p
        y = g_new - g
        sy = jnp.vdot(s, y)
        rho = jnp.where(sy > 0, 1.0 / jnp.where(sy > 0, sy, 1.0), 0.0)
        left = identity - rho * jnp.outer(s, y)
        h_new = jnp.where(sy > 0, left @ h @ left.T + rho * jnp.outer(s, s), h)
        return (k + 1, jnp.where(found, x + s, x), jnp.where(found, f_new, f),
                jnp.where(found, g_new, g), jnp.where(found, h_new, h),
                jnp.where(found, 0, 3).astype(jnp.int32), nfev + evals)

    state = (jnp.int32(0), x0, f0, g0, identity, jnp.int32(0), jnp.int32(1))
    k, x, f, g, h, status, nfev = lax.while_loop(cond, body, state)
    converged = gnorm(g) < gtol
    status = jnp.where(converged, 0, jnp.where(status == 3, 3, 1)).astype(jnp.int32)
    return OptimizeResults(x=x, success=converged, status=status, fun=f, jac=g, hess_inv=h,
                           nfev=nfev, njev=nfev, nit=k)


def minimize(fun: Callable[..., Any], x0: Any, args: tuple = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """Minimise ``fun(x, *args)`` over the 1-D array ``x`` from ``x0``
    (``method="BFGS"``, the only one, as in JAX).  ``options``: ``maxiter``,
    ``gtol`` (default ``tol`` or 1e-5), ``norm`` (default inf)."""
    if not isinstance(args, tuple):
        raise TypeError(f"minimize: args must be a tuple, not {type(args).__name__}")
    if method.lower() != "bfgs":
        raise ValueError(f"minimize: method {method!r} is not recognised (only 'BFGS')")
    options = dict(options or {})
    unknown = set(options) - {"maxiter", "gtol", "norm", "line_search_maxiter"}
    if unknown:
        raise TypeError(f"minimize: unknown options {sorted(unknown)}")
    if np.ndim(x0) != 1:
        raise ValueError(f"minimize: x0 must be 1-D, not shape {np.shape(x0)}")
    gtol = options.get("gtol", 1e-5 if tol is None else tol)
    return _bfgs(lambda x: fun(x, *args), x0, options.get("maxiter"), gtol,
                 options.get("norm", np.inf))
