"""The negative binomial distribution (``jax.scipy.stats.nbinom``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import gammaln, xlogy

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote_inexact(k, n, p, loc)
    y = k - loc
    comb = gammaln(y + n) - gammaln(n) - gammaln(y + 1)
    return xnp.where(k < loc, -np.inf, comb + xlogy(n, p) + xlogy(y, 1 - p))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    return lax.exp(logpmf(k, n, p, loc))
