"""The beta-binomial distribution (``jax.scipy.stats.betabinom``):
``C(n, k) B(k + a, n - k + b) / B(a, b)`` on ``0 <= k - loc <= n``, a
non-integer ``k - loc`` taken down to an integer as in JAX."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import betaln, gammaln

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    k, n, a, b, loc = promote_inexact(k, n, a, b, loc)
    y = xnp.floor(k - loc)
    log_comb = gammaln(n + 1) - gammaln(y + 1) - gammaln(n - y + 1)
    out = log_comb + betaln(y + a, n - y + b) - betaln(a, b)
    out = xnp.where((y >= 0) & (y <= n), out, -np.inf)
    return xnp.where((a > 0) & (b > 0) & (n >= 0), out, xnp.nan)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    return xnp.exp(logpmf(k, n, a, b, loc))
