"""The Pareto distribution (``jax.scipy.stats.pareto``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


@quiet
def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote_inexact(x, b, loc, scale)
    y = (x - loc) / scale
    return xnp.where(x < loc + scale, -np.inf, -(lax.log(scale / b) + (b + 1) * lax.log(y)))


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, b, loc, scale))


@quiet
def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote_inexact(x, b, loc, scale)
    y = (x - loc) / scale
    return xnp.where(x < loc + scale, 0.0, 1 - xnp.power(y, -b))


@quiet
def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote_inexact(x, b, loc, scale)
    y = (x - loc) / scale
    return xnp.where(x < loc + scale, -np.inf, lax.log1p(-xnp.power(y, -b)))


@quiet
def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote_inexact(x, b, loc, scale)
    y = (x - loc) / scale
    return xnp.where(x < loc + scale, 0.0, -(b * lax.log(y)))


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logsf(x, b, loc, scale))


@quiet
def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, b, loc, scale = promote_inexact(q, b, loc, scale)
    value = loc + scale * xnp.power(1 - q, -(1 / b))
    return xnp.where(xnp.isnan(q) | (q < 0) | (q > 1), np.nan, value)
