"""The chi-squared distribution (``jax.scipy.stats.chi2``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import gammainc, gammaincc

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


@quiet
def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote_inexact(x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    kernel = (half_df - 1) * lax.log(y) - y / 2
    normalizer = -(lax.lgamma(half_df) + float(np.log(2)) * df / 2)
    return xnp.where(x < loc, -np.inf, normalizer - lax.log(scale) + kernel)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, df, loc, scale))


@quiet
def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote_inexact(x, df, loc, scale)
    return gammainc(df / 2, xnp.maximum((x - loc) / (scale * 2), 0))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(cdf(x, df, loc, scale))


@quiet
def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote_inexact(x, df, loc, scale)
    return gammaincc(df / 2, xnp.maximum((x - loc) / (scale * 2), 0))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.log(sf(x, df, loc, scale))
