"""The exponential distribution (``jax.scipy.stats.expon``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


@quiet
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return xnp.where(x < loc, -np.inf, -((x - loc) / scale + lax.log(scale)))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    neg_scaled = (loc - x) / scale
    return xnp.where(x < loc, xnp.zeros_like(neg_scaled), -lax.expm1(neg_scaled))


@quiet
def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    neg_scaled = (loc - x) / scale
    return xnp.where(x < loc, xnp.zeros_like(neg_scaled), neg_scaled)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logsf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log1p(-sf(x, loc, scale))


@quiet
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote_inexact(q, loc, scale)
    return xnp.where(xnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc - scale * lax.log1p(-q))
