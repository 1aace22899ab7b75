"""``jax.scipy.integrate``: ``trapezoid``."""
from __future__ import annotations

from typing import Any

import numxla.primitives.numpy as xnp

__all__ = ["trapezoid"]


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule."""
    return xnp.trapezoid(y, x=x, dx=dx, axis=axis)
