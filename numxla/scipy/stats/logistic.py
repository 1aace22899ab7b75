"""The logistic distribution (``jax.scipy.stats.logistic``)."""
from __future__ import annotations

from typing import Any

import numxla.primitives as lax
from .._util import logaddexp, promote_inexact, quiet
from ..special import expit, logit

__all__ = ["logpdf", "pdf", "cdf", "sf", "ppf", "isf"]


@quiet
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * logaddexp(half, -half) - lax.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return expit((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return expit(-(x - loc) / scale)


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return logit(x) * scale + loc


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return -logit(x) * scale + loc
