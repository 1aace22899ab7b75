"""The normal distribution (``jax.scipy.stats.norm``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import default_float, promote_inexact, quiet
from ..special import log_ndtr, ndtr, ndtri

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]


@quiet
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    scale_sq = scale * scale
    return (lax.log(float(2 * np.pi) * scale_sq) + (x - loc) * (x - loc) / scale_sq) / -2.0


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return ndtr((x - loc) / scale)


@quiet
def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return log_ndtr((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return logcdf(-x, -loc, scale)


@quiet
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote_inexact(q, loc, scale)
    return xnp.asarray(ndtri(q) * scale + loc, default_float())  # JAX's jnp.asarray(..., float)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    (q,) = promote_inexact(q)
    return ppf(1 - q, loc, scale)
