"""The binomial distribution (``jax.scipy.stats.binom``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import gammaln, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote_inexact(k, n, p, loc)
    y = k - loc
    comb = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    linear = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = xnp.where(((y == 0) & (n == 0)) | (linear == 0), 0.0, comb + linear)
    return xnp.where((k >= loc) & (k < loc + n + 1), log_probs, -np.inf)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    return lax.exp(logpmf(k, n, p, loc))
