"""The left-skewed Gumbel distribution (``jax.scipy.stats.gumbel_l``): the
mirror image of ``gumbel_r``."""
from __future__ import annotations

from typing import Any

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def _z(x: Any, loc: Any, scale: Any) -> tuple[Any, Any]:
    x, loc, scale = promote_inexact(x, loc, scale)
    return (x - loc) / scale, scale


@quiet
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, scale = _z(x, loc, scale)
    return z - xnp.exp(z) - xnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return xnp.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = _z(x, loc, scale)
    return -xnp.expm1(-xnp.exp(z))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return xnp.log(cdf(x, loc, scale))


@quiet
def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    z, _ = _z(x, loc, scale)
    return -xnp.exp(z)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return xnp.exp(logsf(x, loc, scale))


@quiet
def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    p, loc, scale = promote_inexact(p, loc, scale)
    return xnp.where((p > 0) & (p < 1), loc + scale * xnp.log(-xnp.log1p(-p)), xnp.nan)
