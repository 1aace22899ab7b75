"""The gamma distribution (``jax.scipy.stats.gamma``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import gammainc, gammaincc, gammaln, xlogy

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


@quiet
def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    ok = x >= loc
    y = xnp.where(ok, (x - loc) / scale, 1)
    log_probs = xlogy(a - 1, y) - y - (gammaln(a) + lax.log(scale))
    return xnp.where(ok, log_probs, -np.inf)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, a, loc, scale))


@quiet
def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    return gammainc(a, xnp.maximum((x - loc) / scale, 0))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(cdf(x, a, loc, scale))


@quiet
def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote_inexact(x, a, loc, scale)
    y = (x - loc) / scale
    return xnp.where(y < 0, 1, gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(sf(x, a, loc, scale))
