"""The beta distribution (``jax.scipy.stats.beta``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import betainc, betaln, xlog1py, xlogy

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


@quiet
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = -betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - lax.log(scale)
    out = xnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return xnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, out)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, a, b, loc, scale))


@quiet
def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    return betainc(a, b, xnp.clip((x - loc) / scale, 0, 1))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(cdf(x, a, b, loc, scale))


@quiet
def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    return betainc(b, a, 1 - xnp.clip((x - loc) / scale, 0, 1))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(sf(x, a, b, loc, scale))
