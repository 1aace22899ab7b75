"""``jax.scipy.ndimage``: ``map_coordinates``, interpolation of an N-d array
at fractional coordinates (orders 0 and 1), differentiable in the array's
values and (order 1) in the coordinates."""
from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp

from ._util import dtype_of

__all__ = ["map_coordinates"]

_MODES = ("constant", "nearest", "wrap", "mirror", "reflect")


def _fold(index: Any, size: int, mode: str) -> Any:
    """Integer ``index`` mapped into ``[0, size)`` by the boundary ``mode``."""
    if mode in ("constant", "nearest"):   # constant: the caller masks what falls outside
        return xnp.clip(index, 0, size - 1)
    if mode == "wrap":
        return xnp.remainder(index, size)
    if mode == "mirror":                    # ... 2 1 | 0 1 2 ... n-1 | n-2 ...
        if size == 1:
            return xnp.zeros_like(index)
        t = xnp.remainder(index, 2 * size - 2)
        return xnp.where(t < size, t, 2 * size - 2 - t)
    t = xnp.remainder(index, 2 * size)        # reflect: ... 1 0 | 0 1 ... n-1 | n-1 ...
    return xnp.where(t < size, t, 2 * size - 1 - t)


def _taps(coordinate: Any, order: int) -> list[tuple[Any, Any]]:
    """``(integer index, weight)`` of the samples one coordinate reads."""
    if order == 0:   # nearest sample, halves rounded away from zero
        return [(lax.round(coordinate).astype(np.int32), None)]
    lower = xnp.floor(coordinate)
    frac = coordinate - lower
    lower = lower.astype(np.int32)
    return [(lower, 1 - frac), (lower + 1, frac)]


def map_coordinates(input: Any, coordinates: Sequence[Any], order: int, mode: str = "constant",
                    cval: Any = 0.0) -> Any:
    """``input`` sampled at ``coordinates`` (one array per dimension of
    ``input``, broadcast together): ``order`` 0 takes the nearest sample,
    1 interpolates linearly between the neighbours.  Samples outside the
    array follow ``mode``: ``'constant'`` (``cval``), ``'nearest'`` (the edge),
    ``'wrap'`` (periodic), ``'mirror'`` (reflected about the edge samples) or
    ``'reflect'`` (reflected about the edges, the edge samples repeated).
    Integer inputs give rounded results of their own type."""
    if order not in (0, 1):
        raise NotImplementedError(
            f"map_coordinates: order must be 0 or 1 (higher orders are not supported), "
            f"got {order!r}")
    if mode not in _MODES:
        raise ValueError(f"map_coordinates: mode must be one of {_MODES}, got {mode!r}")
    input = xnp.asarray(input)
    if isinstance(coordinates, (list, tuple)):
        coordinates = [xnp.asarray(c) for c in coordinates]
    else:
        coordinates = xnp.asarray(coordinates)
        coordinates = [coordinates[i] for i in range(coordinates.shape[0])]
    if len(coordinates) != input.ndim:
        raise ValueError(f"map_coordinates: coordinates must give one array per dimension of "
                         f"input ({input.ndim}), got {len(coordinates)}")
    out_dtype = dtype_of(input)
    work = np.result_type(out_dtype, *(dtype_of(c) for c in coordinates), np.float32)
    if not np.issubdtype(work, np.inexact):
        work = np.dtype(np.float32)
    coordinates = [c.astype(work) for c in coordinates]
    values = input.astype(work)
    cval = xnp.asarray(cval).astype(work)

    per_dim = []
    for coordinate, size in zip(coordinates, input.shape):
        taps = []
        for index, weight in _taps(coordinate, order):
            inside = (index >= 0) & (index < size) if mode == "constant" else None
            taps.append((_fold(index, size, mode), weight, inside))
        per_dim.append(taps)

    result = None
    for corner in itertools.product(*per_dim):
        sample = values[tuple(index for index, _, _ in corner)]
        if mode == "constant":
            inside = corner[0][2]
            for _, _, flag in corner[1:]:
                inside = inside & flag
            sample = xnp.where(inside, sample, cval)
        for _, weight, _ in corner:
            if weight is not None:
                sample = sample * weight
        result = sample if result is None else result + sample
    if np.issubdtype(out_dtype, np.integer):
        result = lax.round(result)
    return result.astype(out_dtype)
