"""``jax.scipy.optimize``: ``minimize`` (BFGS, JAX's algorithm step for step)
and ``OptimizeResults``."""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numxla.primitives.numpy as jnp

from .bfgs import minimize_bfgs
from .line_search import line_search

__all__ = ["minimize", "OptimizeResults", "line_search"]


class OptimizeResults(NamedTuple):
    """The result of :func:`minimize` (SciPy's fields): ``x``, ``success``,
    ``status`` (0 converged, 1 max BFGS iterations, 3 zoom failed, 4 saddle
    point, 5 max line search iterations, -1 undefined), ``fun``, ``jac``,
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


def minimize(fun: Callable[..., Any], x0: Any, args: tuple = (), *, method: str,
             tol: float | None = None, options: Mapping[str, Any] | None = None
             ) -> OptimizeResults:
    """Minimise ``fun(x, *args)`` (``x`` 1-D) from ``x0``; ``method="BFGS"``
    (the only one, as in JAX); ``options``: ``maxiter``, ``norm``, ``gtol``,
    ``line_search_maxiter``.  Works eagerly and under ``jit``."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def fun_with_args(x: Any) -> Any:
        return fun(x, *args)

    if method.lower() == "bfgs":
        results = minimize_bfgs(fun_with_args, x0, **options)
        success = results.converged & jnp.logical_not(results.failed)
        return OptimizeResults(x=results.x_k, success=success, status=results.status,
                               fun=results.f_k, jac=results.g_k, hess_inv=results.H_k,
                               nfev=results.nfev, njev=results.ngev, nit=results.k)
    raise ValueError(f"Method {method} not recognized")
