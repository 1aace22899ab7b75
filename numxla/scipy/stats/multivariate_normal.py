"""The multivariate normal distribution (``jax.scipy.stats.multivariate_normal``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf"]


def _solve_lower(chol: Any, y: Any) -> Any:
    """``chol^-1 y`` for vectors ``y`` along the last axis (batched)."""
    n = y.shape[-1]
    if chol.ndim == 2:  # one factor: the vectors as the columns of one solve
        batch = y.shape[:-1]
        cols = xnp.transpose(xnp.reshape(y, (-1, n)))
        out = lax.triangular_solve(chol, cols, left_side=True, lower=True)
        return xnp.reshape(xnp.transpose(out), batch + (n,))
    batch = xnp.broadcast_shapes(chol.shape[:-2], y.shape[:-1])
    chol = xnp.broadcast_to(chol, batch + (n, n))
    cols = xnp.broadcast_to(y, batch + (n,))[..., None]
    return lax.triangular_solve(chol, cols, left_side=True, lower=True)[..., 0]


@quiet
def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """The log density; ``cov`` a scalar (isotropic) or ``(..., n, n)`` matrix."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = (xnp.asarray(v) for v in promote_inexact(x, mean, cov))
    log_2pi = float(np.log(2 * np.pi))
    if not mean.shape:
        return -0.5 * (x - mean) ** 2 / cov - 0.5 * (log_2pi + xnp.log(cov))
    n = mean.shape[-1]
    y = x - mean
    if not cov.shape:
        return -0.5 * xnp.sum(y * y, axis=-1) / cov - n / 2 * (log_2pi + xnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    chol = xnp.linalg.cholesky(cov)  # symmetrized input, as JAX's (a symmetric gradient)
    z = _solve_lower(chol, y)
    log_det = xnp.sum(xnp.log(xnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * xnp.sum(z * z, axis=-1) - n / 2 * log_2pi - log_det


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    return lax.exp(logpdf(x, mean, cov))
