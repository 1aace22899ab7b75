"""The geometric distribution on 1, 2, ... (``jax.scipy.stats.geom``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from .._util import promote_inexact, quiet
from ..special import xlog1py

__all__ = ["logpmf", "pmf"]


@quiet
def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote_inexact(k, p, loc)
    x = k - loc
    return xnp.where(x <= 0, -np.inf, xlog1py(x - 1, -p) + lax.log(p))


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return xnp.exp(logpmf(k, p, loc))
