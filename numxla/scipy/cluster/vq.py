"""``jax.scipy.cluster.vq``: ``vq``, each observation's nearest code."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp

from .._util import promote_inexact

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """``(code, dist)``: for each row of ``obs`` (M, N) the index (int32) of
    the nearest row of ``code_book`` (K, N) and the Euclidean distance to it
    (1-D arrays are single features).  The first code wins ties; NaNs are not
    checked (``check_finite`` is accepted and ignored, as in JAX)."""
    obs, code_book = promote_inexact(obs, code_book)
    if obs.ndim != code_book.ndim or obs.ndim not in (1, 2):
        raise ValueError(f"vq: obs and code_book must both be 1-D or both 2-D, got shapes "
                         f"{tuple(obs.shape)} and {tuple(code_book.shape)}")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.shape[1] != code_book.shape[1]:
        raise ValueError(f"vq: obs and code_book must have the same number of features, got "
                         f"{obs.shape[1]} and {code_book.shape[1]}")
    dist = xnp.sqrt(xnp.sum((obs[:, None, :] - code_book[None, :, :]) ** 2, axis=-1))
    code = xnp.argmin(dist, axis=1).astype(np.int32)
    return code, xnp.take_along_axis(dist, code[:, None], axis=1)[:, 0]
