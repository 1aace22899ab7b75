"""The Laplace distribution (``jax.scipy.stats.laplace``)."""
from __future__ import annotations

from typing import Any

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf", "cdf"]


@quiet
def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    return -(xnp.abs(x - loc) / scale + lax.log(2 * scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, loc, scale))


@quiet
def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote_inexact(x, loc, scale)
    diff = (x - loc) / scale
    return xnp.where(diff <= 0, 0.5 * xnp.exp(diff), 1 - 0.5 * xnp.exp(-diff))
