"""``jax.scipy.stats``'s functions of samples: ``mode``, ``rankdata`` and
``sem``.  Ties are found on a stable sort, so the work is O(n log n)."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.dtypes import canonical_type

from .._util import default_float

__all__ = ["mode", "rankdata", "sem", "ModeResult"]


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def _groups(sorted_values: Any) -> tuple[Any, Any]:
    """For each position of a sorted last axis, the first and last positions
    of its run of equal values."""
    n = sorted_values.shape[-1]
    pos = lax.broadcasted_iota(np.int32, sorted_values.shape, sorted_values.ndim - 1)
    new = xnp.concatenate([xnp.ones(sorted_values.shape[:-1] + (1,), bool),
                           sorted_values[..., 1:] != sorted_values[..., :-1]], axis=-1)
    ends = xnp.concatenate([new[..., 1:], xnp.ones(sorted_values.shape[:-1] + (1,), bool)],
                           axis=-1)
    first = lax.cummax(xnp.where(new, pos, 0), sorted_values.ndim - 1)
    last = lax.cummin(xnp.where(ends, pos, n - 1), sorted_values.ndim - 1, reverse=True)
    return first, last


def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (the smallest of equally
    frequent ones) and its count."""
    if nan_policy != "propagate":
        raise NotImplementedError("mode: only nan_policy='propagate' is supported")
    a = xnp.asarray(a)
    if axis is None:
        a, axis = xnp.ravel(a), 0
    a = xnp.moveaxis(a, axis, -1)
    s = xnp.sort(a, axis=-1)
    first, last = _groups(s)
    counts = last - first + 1
    best = xnp.argmax(counts, axis=-1, keepdims=True)   # the first: the smallest value
    values = xnp.take_along_axis(s, best, -1)[..., 0]
    count = xnp.take_along_axis(counts, best, -1)[..., 0]
    if keepdims:
        values, count = xnp.expand_dims(values, axis), xnp.expand_dims(count, axis)
    return ModeResult(values, count.astype(canonical_type(np.int64).numpy_dtype))


def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """Ranks from 1 (as floats, whatever the method, as JAX's), ties by
    ``method``: ``average``, ``min``, ``max``, ``dense`` or ``ordinal``."""
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise ValueError(f"rankdata: unknown method {method!r}")
    if nan_policy != "propagate":
        raise NotImplementedError("rankdata: only nan_policy='propagate' is supported")
    a = xnp.asarray(a)
    if axis is None:
        a, axis = xnp.ravel(a), -1
    a = xnp.moveaxis(a, axis, -1)
    order = xnp.argsort(a, axis=-1, stable=True)
    inverse = xnp.argsort(order, axis=-1, stable=True)
    s = xnp.take_along_axis(a, order, -1)
    first, last = _groups(s)
    if method == "ordinal":
        ranks = inverse + 1
    else:
        if method == "dense":
            new = xnp.concatenate([xnp.ones(s.shape[:-1] + (1,), bool),
                                   s[..., 1:] != s[..., :-1]], axis=-1)
            by_position = xnp.cumsum(new.astype(np.int32), axis=-1)
        elif method == "min":
            by_position = first + 1
        elif method == "max":
            by_position = last + 1
        else:
            by_position = (first + last).astype(default_float()) / 2 + 1
        ranks = xnp.take_along_axis(by_position, inverse, -1)
    return xnp.moveaxis(ranks.astype(default_float()), -1, axis)


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean: ``std(a, ddof) / sqrt(n)``."""
    if nan_policy != "propagate":
        raise NotImplementedError("sem: only nan_policy='propagate' is supported")
    a = xnp.asarray(a)
    if axis is None:
        a, axis = xnp.ravel(a), 0
    n = a.shape[axis]
    return xnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / float(np.sqrt(n))
