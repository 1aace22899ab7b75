"""The von Mises distribution on the circle (``jax.scipy.stats.vonmises``):
density ``exp(kappa cos x) / (2 pi I0(kappa))``, periodic in ``x``."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import i0e

__all__ = ["logpdf", "pdf"]


@quiet
def logpdf(x: Any, kappa: Any) -> Any:
    x, kappa = promote_inexact(x, kappa)
    # I0(kappa) = i0e(kappa) exp(kappa): the exponential scaling keeps large kappa finite
    out = kappa * (xnp.cos(x) - 1) - xnp.log(float(2 * np.pi) * i0e(kappa))
    return xnp.where(kappa > 0, out, xnp.nan)


def pdf(x: Any, kappa: Any) -> Any:
    return xnp.exp(logpdf(x, kappa))
