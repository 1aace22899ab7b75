"""``jax.ops``: segment reductions (``segment_sum``, ``segment_max``...):
``data``'s rows combined by segment id, each a scatter into
``num_segments`` rows (ids out of range are dropped, as in JAX)."""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives.numpy as jnp

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _segment(op: str, data: Any, segment_ids: Any, num_segments: int | None,
             indices_are_sorted: bool, unique_indices: bool, bucket_size: Any, mode: Any) -> Any:
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    if num_segments is None:
        num_segments = int(np.max(np.asarray(segment_ids))) + 1  # concrete ids only, as in JAX
    identity = {"add": 0, "multiply": 1}.get(op)
    if identity is None:
        dtype = jnp.result_type(data)
        if jnp.issubdtype(dtype, jnp.inexact):
            identity = -np.inf if op == "max" else np.inf
        else:
            info = jnp.iinfo(dtype)
            identity = info.min if op == "max" else info.max
    out = jnp.full((int(num_segments),) + tuple(data.shape[segment_ids.ndim:]), identity,
                   dtype=jnp.result_type(data))
    ref = out.at[segment_ids]
    return getattr(ref, op)(data, indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode or "drop")


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: Any = None, mode: Any = None) -> Any:
    """The sum of ``data``'s rows in each segment (0 for an empty one)."""
    return _segment("add", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: Any = None, mode: Any = None) -> Any:
    """The product of ``data``'s rows in each segment (1 for an empty one)."""
    return _segment("multiply", data, segment_ids, num_segments, indices_are_sorted,
                    unique_indices, bucket_size, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: Any = None, mode: Any = None) -> Any:
    """The maximum of each segment (-inf, or the type's minimum, for an empty one)."""
    return _segment("max", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: Any = None, mode: Any = None) -> Any:
    """The minimum of each segment (inf, or the type's maximum, for an empty one)."""
    return _segment("min", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode)
