"""The Poisson distribution (``jax.scipy.stats.poisson``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import entr, gammaincc, gammaln, xlogy

__all__ = ["logpmf", "pmf", "cdf", "entropy"]


@quiet
def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = promote_inexact(k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return xnp.where((x < 0) | (xnp.round(k) != k), -np.inf, log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    return xnp.exp(logpmf(k, mu, loc))


@quiet
def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = promote_inexact(k, mu, loc)
    x = k - loc
    return xnp.where(x < 0, 0, gammaincc(xnp.floor(1 + x), mu))


def _entropy_sum(mu: Any, max_k: int, upper: Any) -> Any:
    """``sum_k entr(pmf(k))`` over ``k < upper`` (at most ``max_k`` terms)."""
    k = xnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = xnp.where(k < upper[None, :], pmf(k, mu, 0), 0.0)
    return xnp.sum(entr(probs), axis=0)


@quiet
def entropy(mu: Any, loc: Any = 0) -> Any:
    """The entropy: summed for mu < 100, asymptotic beyond (JAX's)."""
    mu, loc = promote_inexact(mu, loc)
    shape = xnp.broadcast_shapes(xnp.shape(mu), xnp.shape(loc))
    flat = xnp.ravel(xnp.asarray(mu))
    small = _entropy_sum(flat, 35, xnp.ceil(flat + 20))
    medium = _entropy_sum(flat, 250, xnp.ceil(flat + 10 * xnp.sqrt(flat) + 20))
    large = 0.5 * xnp.log(float(2 * np.pi * np.e) * flat) - 1.0 / (12 * flat)
    out = xnp.where(flat == 0, 0.0, xnp.where(flat < 10, small, xnp.where(flat < 100, medium,
                                                                            large)))
    return xnp.broadcast_to(xnp.reshape(out, xnp.shape(mu)), shape)
