"""The wrapped Cauchy distribution on ``[0, 2 pi]`` (``jax.scipy.stats.wrapcauchy``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf"]


@quiet
def logpdf(x: Any, c: Any) -> Any:
    x, c = promote_inexact(x, c)
    out = xnp.log(1 - c * c) - xnp.log(float(2 * np.pi)) - xnp.log(1 + c * c - 2 * c * xnp.cos(x))
    out = xnp.where((x >= 0) & (x <= float(2 * np.pi)), out, -np.inf)
    return xnp.where((c > 0) & (c < 1), out, xnp.nan)


def pdf(x: Any, c: Any) -> Any:
    return xnp.exp(logpdf(x, c))
