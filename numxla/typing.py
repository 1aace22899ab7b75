"""``jax.typing``: the annotations JAX code writes (``ArrayLike``, ``DTypeLike``)."""
from __future__ import annotations

from typing import Any, Union

import numpy as np

import numxla.primitives.numpy as _jnp

__all__ = ["ArrayLike", "DTypeLike"]

ArrayLike = Union[_jnp.ndarray, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type, np.dtype, Any]
