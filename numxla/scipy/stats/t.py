"""Student's t distribution (``jax.scipy.stats.t``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
from .._util import promote_inexact, quiet

__all__ = ["logpdf", "pdf"]


@quiet
def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote_inexact(x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    half_df_plus = half_df + 0.5
    normalize = (lax.lgamma(half_df) + lax.log(scale * scale * float(np.pi) * df) / 2
                 - lax.lgamma(half_df_plus))
    return -(normalize + half_df_plus * lax.log1p(y * y / df))


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return lax.exp(logpdf(x, df, loc, scale))
