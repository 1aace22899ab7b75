"""The left-skewed Gumbel distribution (``jax.scipy.stats.gumbel_l``): the
mirror image of ``gumbel_r`` (``X ~ gumbel_l(loc)`` iff ``-X ~ gumbel_r(-loc)``),
so its density, distribution and survival functions are ``gumbel_r``'s at
``-x``, with the tails swapped."""
from __future__ import annotations

from typing import Any

import numxla.primitives.numpy as xnp
from . import gumbel_r
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf"]


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return gumbel_r.logpdf(-xnp.asarray(x), -xnp.asarray(loc), scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return gumbel_r.pdf(-xnp.asarray(x), -xnp.asarray(loc), scale)


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return gumbel_r.sf(-xnp.asarray(x), -xnp.asarray(loc), scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return gumbel_r.logsf(-xnp.asarray(x), -xnp.asarray(loc), scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return gumbel_r.cdf(-xnp.asarray(x), -xnp.asarray(loc), scale)


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return gumbel_r.logcdf(-xnp.asarray(x), -xnp.asarray(loc), scale)


@quiet
def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    p, loc, scale = promote_inexact(p, loc, scale)
    return xnp.where((p > 0) & (p < 1), loc + scale * xnp.log(-xnp.log1p(-p)), xnp.nan)
