"""The Bernoulli distribution (``jax.scipy.stats.bernoulli``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import xlog1py, xlogy

__all__ = ["logpmf", "pmf", "cdf", "ppf"]


@quiet
def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote_inexact(k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1 - x, -p)
    return xnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return xnp.exp(logpmf(k, p, loc))


@quiet
def cdf(k: Any, p: Any) -> Any:
    k, p = promote_inexact(k, p)
    bad = xnp.isnan(k) | xnp.isnan(p) | (p < 0) | (p > 1)
    out = xnp.where(k < 0, 0.0, xnp.where(k < 1, 1 - p, 1.0))
    return xnp.where(bad, np.nan, out)


@quiet
def ppf(q: Any, p: Any) -> Any:
    q, p = (xnp.asarray(v) for v in promote_inexact(q, p))
    bad = xnp.isnan(q) | xnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return xnp.where(bad, np.nan, xnp.where(q <= 1 - p, 0.0, 1.0)).astype(q.dtype)
