"""The generalized normal distribution (``jax.scipy.stats.gennorm``):
density ``beta / (2 Gamma(1/beta)) exp(-|x|^beta)``."""
from __future__ import annotations

from typing import Any

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import gammainc, gammaln

__all__ = ["logpdf", "pdf", "cdf"]


@quiet
def logpdf(x: Any, beta: Any) -> Any:
    x, beta = promote_inexact(x, beta)
    return xnp.log(0.5 * beta) - gammaln(1 / beta) - xnp.abs(x) ** beta


def pdf(x: Any, beta: Any) -> Any:
    return xnp.exp(logpdf(x, beta))


@quiet
def cdf(x: Any, beta: Any) -> Any:
    x, beta = promote_inexact(x, beta)
    return 0.5 * (1 + xnp.sign(x) * gammainc(1 / beta, xnp.abs(x) ** beta))
