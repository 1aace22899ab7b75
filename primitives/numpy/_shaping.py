"""NumPy-style layer: joining, splitting and rearranging beyond ``_indexing``'s.

``block``, ``column_stack``, ``dstack``, ``append``, ``array_split`` and the
``[hvd]split`` family, ``insert``/``delete`` (at concrete positions, as one
gather of a static permutation), ``rot90``, ``rollaxis``, ``resize``,
``unstack``, ``broadcast_arrays``, ``diagonal`` and ``trace``.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import Tracer, abstractify

from .. import elementwise as ew
from .. import shape_ops as lax
from ._core import _arraylike, broadcast_shapes, broadcast_to, reshape, sum as _sum, transpose
from ._gather_indexing import take
from ._indexing import _axis, concatenate, flip, moveaxis, ravel, split, swapaxes, tile
from .._util import dims as _dims

__all__ = [
    "append", "array_split", "atleast_3d", "block", "broadcast_arrays", "column_stack", "concat",
    "delete", "dsplit", "dstack", "hsplit", "vsplit", "fliplr", "flipud", "insert",
    "matrix_transpose", "permute_dims", "resize", "rollaxis", "rot90", "unstack", "diagonal",
    "trace",
]



def _one_or_list(out: list[Any]) -> Any:
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys: Any) -> Any:
    """Views with at least three dimensions: (N,) -> (1, N, 1), (M, N) -> (M, N, 1)."""
    out = []
    for a in arys:
        a = _arraylike(a)
        dims = _dims(a)
        shape = {0: (1, 1, 1), 1: (1,) + dims + (1,), 2: dims + (1,)}.get(len(dims), dims)
        out.append(reshape(a, shape))
    return _one_or_list(out)


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    """The array API's ``concatenate``."""
    return concatenate(arrays, axis)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` appended to ``arr`` (both flattened if ``axis`` is None)."""
    if axis is None:
        return concatenate([ravel(_arraylike(arr)), ravel(_arraylike(values))], 0)
    return concatenate([arr, values], axis)


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """``split`` that allows unequal sections: the first ``n % sections`` get one more."""
    if isinstance(indices_or_sections, (int, np.integer)):
        n = _dims(ary)[_axis("array_split", axis, len(_dims(ary)))]
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("array_split: number of sections must be larger than 0")
        size, extra = divmod(n, sections)
        bounds = np.cumsum([size + 1] * extra + [size] * (sections - extra))[:-1]
        return split(ary, [int(b) for b in bounds], axis)
    return split(ary, indices_or_sections, axis)


def _split_along(name: str, axis: int, min_rank: int):
    def fn(ary: Any, indices_or_sections: Any) -> list[Any]:
        rank = abstractify(ary).ndim
        if rank < min_rank:
            raise ValueError(f"{name} only works on arrays of {min_rank} or more dimensions")
        ax = 0 if name == "hsplit" and rank == 1 else axis
        return split(ary, indices_or_sections, ax)
    fn.__name__ = name
    fn.__doc__ = f"NumPy's ``{name}``: ``split`` along axis {axis}."
    return fn


hsplit = _split_along("hsplit", 1, 1)
vsplit = _split_along("vsplit", 0, 2)
dsplit = _split_along("dsplit", 2, 3)


def column_stack(tup: Sequence[Any]) -> Any:
    """1-D arrays as columns, 2-D arrays as they are, joined along axis 1."""
    arrays = []
    for a in tup:
        a = _arraylike(a)
        arrays.append(reshape(a, (-1, 1)) if abstractify(a).ndim < 2 else a)
    return concatenate(arrays, 1)


def dstack(tup: Sequence[Any]) -> Any:
    """Join along the third axis (after ``atleast_3d``)."""
    return concatenate([atleast_3d(a) for a in tup], 2)


def _block_depth(arrays: Any) -> int:
    if isinstance(arrays, list):
        if not arrays:
            raise ValueError("block: lists cannot be empty")
        depths = {_block_depth(a) for a in arrays}
        if len(depths) != 1:
            raise ValueError("block: list depths are mismatched")
        return 1 + depths.pop()
    if isinstance(arrays, tuple):
        raise TypeError("block: arrays is a tuple; only lists can be used to arrange blocks")
    return 0


def _block_rank(arrays: Any) -> int:
    if isinstance(arrays, list):
        return builtins.max(_block_rank(a) for a in arrays)
    return abstractify(_arraylike(arrays)).ndim


def block(arrays: Any) -> Any:
    """Assemble an array from nested lists of blocks: the innermost lists join
    along the last axis, the next ones along the second-to-last..."""
    depth = _block_depth(arrays)
    rank = builtins.max(depth, _block_rank(arrays))

    def assemble(item: Any, level: int) -> Any:
        if level == depth:
            x = _arraylike(item)
            return reshape(x, (1,) * (rank - abstractify(x).ndim) + _dims(x))
        parts = [assemble(i, level + 1) for i in item]
        return concatenate(parts, rank - depth + level)

    return assemble(arrays, 0)


def broadcast_arrays(*args: Any) -> list[Any]:
    """The arguments broadcast to their common shape."""
    args = [_arraylike(a) for a in args]
    shape = broadcast_shapes(*(_dims(a) for a in args))
    return [broadcast_to(a, shape) for a in args]


def fliplr(m: Any) -> Any:
    return flip(m, 1)


def flipud(m: Any) -> Any:
    return flip(m, 0)


def matrix_transpose(x: Any, /) -> Any:
    """Swap the last two axes."""
    if abstractify(x).ndim < 2:
        raise ValueError("matrix_transpose: x must be at least two-dimensional")
    return swapaxes(x, -1, -2)


def permute_dims(a: Any, /, axes: Sequence[int]) -> Any:
    """The array API's ``transpose``."""
    return transpose(a, axes)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """NumPy's ``rollaxis``: move ``axis`` to before position ``start``."""
    rank = abstractify(a).ndim
    axis = _axis("rollaxis", axis, rank)
    if start < 0:
        start += rank
    if not 0 <= start <= rank:
        raise ValueError(f"rollaxis: start {start} is out of bounds for rank {rank}")
    if axis < start:
        start -= 1
    return a if axis == start else moveaxis(a, axis, start)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (first towards second)."""
    rank = abstractify(m).ndim
    a0, a1 = (_axis("rot90", ax, rank) for ax in axes)
    if a0 == a1:
        raise ValueError("rot90: axes must be different")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(m, (a0, a1))
    perm = list(range(rank))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    return transpose(flip(m, a1), perm) if k == 1 else flip(transpose(m, perm), a1)


def resize(a: Any, new_shape: int | Sequence[int]) -> Any:
    """The flattened ``a`` repeated cyclically to fill ``new_shape``."""
    shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
    total = int(np.prod(shape, dtype=np.int64))
    flat = ravel(_arraylike(a))
    n = _dims(flat)[0]
    if n == 0 or total == 0:
        from ._indexing import zeros
        return zeros(shape, abstractify(flat).element_type)
    reps = -(-total // n)
    return reshape(lax.slice(tile(flat, reps), (0,), (total,)), shape)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``."""
    rank = abstractify(x).ndim
    axis = _axis("unstack", axis, rank)
    return tuple(lax.squeeze(lax.slice_in_dim(x, i, i + 1, 1, axis), (axis,))
                 for i in range(_dims(x)[axis]))


# -- insert and delete at concrete positions ---------------------------------------------------

def _concrete_positions(name: str, obj: Any) -> Any:
    if isinstance(obj, Tracer):
        raise NotImplementedError(f"{name}: the positions must be concrete (an int, slice or "
                                  f"NumPy array), not a traced value: the result's shape "
                                  f"depends on them")
    return obj


def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """``arr`` without the entries at ``obj`` (an int, slice or index array) along ``axis``."""
    _concrete_positions("delete", obj)
    arr = _arraylike(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = _axis("delete", axis, abstractify(arr).ndim)
    n = _dims(arr)[axis]
    keep = np.delete(np.arange(n), obj if isinstance(obj, slice) else np.asarray(obj))
    return take(arr, keep.astype(np.int32), axis=axis)


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` inserted before the positions ``obj`` (an int, slice or index
    array, concrete) along ``axis``, broadcast as NumPy does."""
    _concrete_positions("insert", obj)
    arr = _arraylike(arr)
    if axis is None:
        arr, axis = ravel(arr), 0
    rank = abstractify(arr).ndim
    axis = _axis("insert", axis, rank)
    dims = _dims(arr)
    n = dims[axis]
    positions = np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj)
    values = ew.convert_element_type(_arraylike(values), abstractify(arr).element_type)
    if positions.ndim == 0:  # NumPy: values = moveaxis(array(values, ndmin=rank), 0, axis)
        v_rank = abstractify(values).ndim
        if v_rank < rank:
            values = reshape(values, (1,) * (rank - v_rank) + _dims(values))
        values = moveaxis(values, 0, axis)
        count = _dims(values)[axis]
    else:
        count = positions.size
    target = dims[:axis] + (count,) + dims[axis + 1:]
    values = broadcast_to(values, target)
    order = np.insert(np.arange(n), positions if positions.ndim else int(positions),
                      np.arange(n, n + count))
    return take(concatenate([arr, values], axis), order.astype(np.int32), axis=axis)


# -- diagonals ---------------------------------------------------------------------------------

def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset`` diagonal of the planes ``(axis1, axis2)``, as the last axis
    (one gather at static positions)."""
    a = _arraylike(a)
    rank = abstractify(a).ndim
    if rank < 2:
        raise ValueError("diagonal requires an array of at least two dimensions")
    a1, a2 = _axis("diagonal", axis1, rank), _axis("diagonal", axis2, rank)
    if a1 == a2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    a = moveaxis(a, (a1, a2), (-2, -1))
    n, m = _dims(a)[-2:]
    rows = np.arange(builtins.max(0, -offset), n)
    rows = rows[rows + offset < m]
    if rows.size == 0:
        return reshape(lax.slice_in_dim(a, 0, 0, 1, rank - 1), _dims(a)[:-2] + (0,))
    from ._indexing import getitem
    return getitem(a, (Ellipsis, rows.astype(np.int32), (rows + offset).astype(np.int32)))


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Any:
    """The sum along the ``offset`` diagonal of the planes ``(axis1, axis2)``."""
    d = diagonal(a, offset, axis1, axis2)
    return _sum(d, -1, dtype=dtype)


# -- array methods of traced values -------------------------------------------------------------

core.OPERATORS.update({
    "attr:diagonal": lambda x: lambda offset=0, axis1=0, axis2=1: diagonal(x, offset, axis1,
                                                                           axis2),
    "attr:trace": lambda x: lambda offset=0, axis1=0, axis2=1, dtype=None: trace(
        x, offset, axis1, axis2, dtype),
    "attr:mT": lambda x: matrix_transpose(x),
})
