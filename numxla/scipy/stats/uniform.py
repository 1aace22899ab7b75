"""The uniform distribution on ``[loc, loc + scale]`` (``jax.scipy.stats.uniform``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf", "cdf", "ppf"]


@quiet
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return xnp.where((x > loc + scale) | (x < loc), -np.inf, -lax.log(scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    inside = (x - loc) / scale
    return xnp.where(x < loc, 0.0, xnp.where(x > loc + scale, 1.0,
                                             xnp.where(xnp.isnan(inside), 0.0, inside)))


@quiet
def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote_inexact(q, loc, scale)
    return xnp.where(xnp.isnan(q) | (q < 0) | (q > 1), np.nan, loc + scale * q)
