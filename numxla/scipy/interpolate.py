"""``jax.scipy.interpolate``: ``RegularGridInterpolator``, linear or
nearest-neighbour interpolation on a rectilinear grid (a pytree: it passes
through ``jit`` and ``vmap``, and differentiates in the values and points)."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import numxla.primitives.numpy as xnp
from numxla.tree_util import register_pytree_node_class

from ._util import promote_inexact

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method: str) -> None:
    if method not in _METHODS:
        raise ValueError(f"RegularGridInterpolator: method {method!r} is not defined "
                         f"(use one of {_METHODS})")


def _check_axis(i: int, axis: Any, size: int) -> None:
    """Dimension ``i``'s grid: 1-D, ``size`` points, strictly ascending where known."""
    if axis.ndim != 1 or axis.shape[0] != size:
        raise ValueError(f"RegularGridInterpolator: points[{i}] must be 1-D with {size} "
                         f"entries (values.shape[{i}]), got shape {tuple(axis.shape)}")
    if size < 2:
        raise ValueError(f"RegularGridInterpolator: points[{i}] needs at least 2 points")
    try:
        concrete = np.asarray(axis)
    except TypeError:   # traced: not checked
        return
    if not np.all(np.diff(concrete) > 0):
        raise ValueError(f"RegularGridInterpolator: points[{i}] must be strictly ascending")


@register_pytree_node_class
class RegularGridInterpolator:
    """Interpolation of ``values`` given on the grid ``points`` (one ascending
    1-D array per leading dimension of ``values``; trailing dimensions are
    carried along).  ``method`` is "linear" or "nearest"; points outside the
    grid give ``fill_value``, or are extrapolated if it is None."""

    def __init__(self, points: Any, values: Any, method: str = "linear",
                 bounds_error: bool = False, fill_value: Any = np.nan) -> None:
        _check_method(method)
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not "
                                      "supported (it cannot be checked under jit)")
        (values,) = promote_inexact(values)
        points = tuple(xnp.asarray(p) for p in points)
        if len(points) > values.ndim:
            raise ValueError(f"RegularGridInterpolator: there are {len(points)} point arrays "
                             f"but values has {values.ndim} dimensions")
        for i, axis in enumerate(points):
            _check_axis(i, axis, values.shape[i])
        self.grid = points
        self.values = values
        self.fill_value = None if fill_value is None else xnp.asarray(fill_value)
        self.method = method
        self.bounds_error = bounds_error

    def _coordinates(self, xi: Any) -> Any:
        """``xi`` as an array of points ``(..., ndim)``."""
        ndim = len(self.grid)
        if isinstance(xi, tuple):
            xi = xnp.stack(xnp.broadcast_arrays(*xi), axis=-1)
        xi = xnp.asarray(xi)
        if xi.ndim == 1:
            xi = xi.reshape(-1, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(f"RegularGridInterpolator: the requested sample points xi have "
                             f"dimension {xi.shape[-1]}, but this interpolator has "
                             f"dimension {ndim}")
        return xi

    def __call__(self, xi: Any, method: str | None = None) -> Any:
        """The interpolated values at the points ``xi`` (``(..., ndim)``, or a
        tuple of broadcastable coordinate arrays)."""
        method = self.method if method is None else method
        _check_method(method)
        xi = self._coordinates(xi)
        lead = xi.shape[:-1]
        xi = xi.reshape(-1, len(self.grid))
        xi, values = promote_inexact(xi, self.values)
        cells, fractions = [], []
        outside = xnp.zeros(xi.shape[:1], bool)
        for i, axis in enumerate(self.grid):
            x = xi[:, i]
            axis = axis.astype(x.dtype)
            cell = xnp.clip(xnp.searchsorted(axis, x) - 1, 0, axis.shape[0] - 2)
            lower = axis[cell]
            cells.append(cell)
            fractions.append((x - lower) / (axis[cell + 1] - lower))
            outside = outside | (x < axis[0]) | (x > axis[-1])
        trailing = (1,) * (values.ndim - len(self.grid))
        if method == "nearest":
            index = tuple(xnp.where(f <= 0.5, c, c + 1) for c, f in zip(cells, fractions))
            result = values[index]
        else:
            result = 0
            for corner in itertools.product((0, 1), repeat=len(self.grid)):
                weight = 1
                for upper, f in zip(corner, fractions):
                    weight = weight * (f if upper else 1 - f)
                index = tuple(c + upper for c, upper in zip(cells, corner))
                result = result + values[index] * weight.reshape(weight.shape + trailing)
        if self.fill_value is not None:
            fill = self.fill_value.astype(result.dtype)
            result = xnp.where(outside.reshape(outside.shape + trailing), fill, result)
        return result.reshape(lead + result.shape[1:])

    def tree_flatten(self) -> tuple[tuple, tuple]:
        return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

    @classmethod
    def tree_unflatten(cls, aux: tuple, children: tuple) -> RegularGridInterpolator:
        out = object.__new__(cls)
        out.grid, out.values, out.fill_value = children
        out.method, out.bounds_error = aux
        return out
