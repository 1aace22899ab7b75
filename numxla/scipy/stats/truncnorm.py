"""The normal distribution truncated to ``[a, b]`` (in standard units;
``jax.scipy.stats.truncnorm``).  The mass between the bounds is computed in
the tail it lies in, so far-tail intervals keep their precision."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import log_ndtr, ndtr
from . import norm

__all__ = ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]


def _log_diff(log_hi: Any, log_lo: Any) -> Any:
    """``log(exp(log_hi) - exp(log_lo))`` for ``log_hi >= log_lo``."""
    return log_hi + xnp.log1p(-xnp.exp(log_lo - log_hi))


def _log_mass(a: Any, b: Any) -> Any:
    """``log(Phi(b) - Phi(a))``: from the upper tail when ``a > 0``, the
    lower tail when ``b < 0``, directly when the interval holds 0."""
    upper = _log_diff(log_ndtr(-a), log_ndtr(-b))
    lower = _log_diff(log_ndtr(b), log_ndtr(a))
    middle = xnp.log1p(-ndtr(a) - ndtr(-b))
    return xnp.where(a > 0, upper, xnp.where(b < 0, lower, middle))


@quiet
def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    z = (x - loc) / scale
    out = norm.logpdf(z) - _log_mass(a, b) - xnp.log(scale)
    return xnp.where((z >= a) & (z <= b), out, -np.inf)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return xnp.exp(logpdf(x, a, b, loc, scale))


@quiet
def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    z = xnp.clip((x - loc) / scale, a, b)
    out = _log_mass(a, z) - _log_mass(a, b)
    return xnp.where(z <= a, -np.inf, xnp.where(z >= b, 0.0, out))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return xnp.exp(logcdf(x, a, b, loc, scale))


@quiet
def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote_inexact(x, a, b, loc, scale)
    # the mirror image: P(X > x) for N truncated to [a, b] is the cdf at -x on [-b, -a]
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return xnp.exp(logsf(x, a, b, loc, scale))
