"""The Dirichlet distribution (``jax.scipy.stats.dirichlet``): ``x`` holds
the simplex coordinates along its first axis (all of them, or all but the
last)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import gammaln, xlogy

__all__ = ["logpdf", "pdf"]


@quiet
def logpdf(x: Any, alpha: Any) -> Any:
    x, alpha = (xnp.asarray(v) for v in promote_inexact(x, alpha))
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(f"`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = xnp.concatenate([x, 1 - xnp.sum(x, axis=0, keepdims=True)], axis=0)
    normalize = xnp.sum(gammaln(alpha)) - gammaln(xnp.sum(alpha))
    alpha = xnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    log_probs = xnp.sum(xlogy(alpha - 1, x), axis=0) - normalize
    simplex = xnp.all(x > 0, axis=0) & (xnp.abs(xnp.sum(x, axis=0) - 1) < 1e-6)
    return xnp.where(simplex, log_probs, -np.inf)


def pdf(x: Any, alpha: Any) -> Any:
    return lax.exp(logpdf(x, alpha))
