"""The multinomial distribution (``jax.scipy.stats.multinomial``): counts
``x`` (last axis) of ``n`` draws with probabilities ``p``."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import gammaln, xlogy

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(x: Any, n: Any, p: Any) -> Any:
    x, p = promote_inexact(x, p)
    (n,) = promote_inexact(n)
    out = gammaln(n + 1) + xnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return xnp.where(xnp.sum(x, axis=-1) == n, out, -np.inf)


def pmf(x: Any, n: Any, p: Any) -> Any:
    return xnp.exp(logpmf(x, n, p))
