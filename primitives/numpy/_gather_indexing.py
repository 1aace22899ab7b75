"""NumPy-style advanced indexing on XLA's Gather and Scatter.

``advanced_getitem(x, index)`` reads ``x[index]`` for any NumPy index
(integers, slices with steps, ``None``, ``Ellipsis``, integer arrays, lists
and traced integer arrays, concrete boolean masks) with ONE ``gather``:

* every advanced index (an integer array, or an int when arrays are present)
  and every strided slice (as an ``iota``-like index vector) becomes a
  component of the start indices and a collapsed slice dimension;
* a unit-step slice becomes an offset dimension of size ``len(slice)``
  (its start, when not 0, a constant component);
* the gather result (batch dimensions first, then offsets) is transposed
  into NumPy's order: the broadcast shape of the advanced indices goes where
  the first of them stood when they are adjacent in the index, else first.

``x.at[index].set/add/multiply/min/max(v)`` scatters with the same plan;
``take`` and ``take_along_axis`` (the latter with Gather's batching
dimensions).  Negative indices wrap as in NumPy.  Concrete out-of-bounds
indices raise ``IndexError`` as in NumPy; traced ones follow XLA: reads
clamp, updates out of bounds are dropped.
"""
from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import NonConcreteBooleanIndexError, Tracer, abstractify

from .. import elementwise as ew
from .. import indexing as lax_indexing
from ..indexing import GatherDimensionNumbers, ScatterDimensionNumbers
from ..shape_ops import broadcast_in_dim, reshape, transpose
from ._core import broadcast_shapes, broadcast_to

__all__ = ["advanced_getitem", "take", "take_along_axis"]


# --------------------------------------------------------------------------
# index normalisation
# --------------------------------------------------------------------------

def _index_dtype(sizes: Sequence[int]) -> np.dtype:
    return np.dtype(np.int32 if builtins.max(sizes, default=0) < 2 ** 31 else np.int64)


def _integer_index(i: Any, size: int, axis: int, dtype: np.dtype, *, wrap: bool = True,
                   check: bool = True) -> Any:
    """An integer index for an axis of ``size``, negatives wrapped once.
    Concrete indices out of bounds raise ``IndexError`` (when ``check``)."""
    if isinstance(i, Tracer):
        t = i.aval.element_type
        if not (t.is_signed or t.is_unsigned):
            raise IndexError(f"indices must be integers, got a traced {t.short_name} array")
        signed = t.is_signed
        i = ew.convert_element_type(i, dtype)
        return ew.select(ew.lt(i, 0), ew.add(i, size), i) if wrap and signed else i
    arr = np.asarray(i)
    if arr.dtype.kind not in "iu":
        if arr.size == 0:
            arr = arr.astype(np.int64)
        else:
            raise IndexError(f"indices must be integers, got {arr.dtype}")
    if check and arr.size and (arr.max() >= size or arr.min() < (-size if wrap else 0)):
        bad = arr[(arr >= size) | (arr < -size)].reshape(-1)[0]
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {size}")
    arr = arr.astype(np.int64)
    if wrap:
        arr = np.where(arr < 0, arr + size, arr)
    return arr.astype(dtype)


def _as_entry(e: Any) -> tuple[str, Any]:
    """Classify one element of a NumPy index."""
    if e is None:
        return "none", None
    if e is Ellipsis:
        return "ellipsis", None
    if isinstance(e, slice):
        return "slice", e
    if isinstance(e, (bool, np.bool_)):
        return "mask", np.asarray(e)
    if isinstance(e, (int, np.integer)):
        return "int", int(e)
    if isinstance(e, Tracer):
        t = e.aval.element_type
        if t.name == "PRED":
            raise NonConcreteBooleanIndexError(
                "a boolean mask index must be concrete (a NumPy array): the shape of the result "
                "depends on its values (use jnp.where(mask, x, fill) or jnp.nonzero(mask, "
                "size=...) instead)")
        return "array", e
    arr = np.asarray(e)
    if arr.dtype == object:
        raise TypeError("an index list containing traced values: stack them into one array "
                        "first")
    if arr.dtype == np.bool_:
        return "mask", arr
    return "array", arr


# --------------------------------------------------------------------------
# the plan: one index as one gather
# --------------------------------------------------------------------------

@dataclass
class _Plan:
    """``x[index]`` as ``transpose(gather(x, indices, ...), perm)`` reshaped to
    ``result_shape`` (which adds the ``None`` dimensions)."""
    indices: Any
    dnums: GatherDimensionNumbers
    slice_sizes: tuple[int, ...]
    perm: tuple[int, ...]
    result_shape: tuple[int, ...]
    none_positions: tuple[int, ...]  # the dimensions of result_shape that None added
    identity: bool  # the index selects the whole array unchanged

    @property
    def scatter_dnums(self) -> ScatterDimensionNumbers:
        d = self.dnums
        return ScatterDimensionNumbers(d.offset_dims, d.collapsed_slice_dims, d.start_index_map)

    def get(self, x: Any, mode: Any = None, fill_value: Any = None) -> Any:
        if self.identity:
            return reshape(x, self.result_shape)
        out = lax_indexing.gather(x, self.indices, self.dnums, self.slice_sizes, mode=mode,
                                  fill_value=fill_value)
        return reshape(transpose(out, self.perm), self.result_shape)

    def updates_for(self, x: Any, values: Any) -> Any:
        """``values`` broadcast to ``x[index]``'s shape, in the gather's dimension order."""
        values = ew.convert_element_type(values, abstractify(x).element_type)
        values = broadcast_to(values, self.result_shape)
        kept = tuple(d for i, d in enumerate(self.result_shape) if i not in self.none_positions)
        return transpose(reshape(values, kept), tuple(int(p) for p in np.argsort(self.perm)))


_NO_DIM = ("none", "bool0")  # entries that consume no operand dimension
_ADVANCED = ("array", "int", "bool0")


def _expand(shape: tuple[int, ...], index: Any) -> list[tuple[str, Any, int]]:
    """The index as ``(kind, value, tuple position)`` entries, one per consumed
    operand dimension (masks split into one integer array per dimension),
    plus ``none`` entries; the Ellipsis and the trailing dimensions become full
    slices."""
    items = index if isinstance(index, tuple) else (index,)
    entries = [_as_entry(e) for e in items]
    if sum(k == "ellipsis" for k, _ in entries) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(v.ndim if k == "mask" else 0 if k in ("none", "ellipsis") else 1
                   for k, v in entries)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {consumed} were indexed")
    out: list[tuple[str, Any, int]] = []
    for pos, (kind, value) in enumerate(entries):
        if kind == "ellipsis":
            out += [("slice", slice(None), pos)] * (len(shape) - consumed)
        elif kind == "mask" and value.ndim == 0:  # True: a new axis of 1, False: of 0
            out.append(("bool0", np.zeros(int(value), np.int64), pos))
        elif kind == "mask":
            dim = sum(1 for k, _, _ in out if k not in _NO_DIM)
            if value.shape != shape[dim:dim + value.ndim]:
                raise IndexError(f"boolean index of shape {value.shape} does not match the "
                                 f"indexed dimensions {shape[dim:dim + value.ndim]}")
            out += [("array", nz, pos) for nz in np.nonzero(value)]
        else:
            out.append((kind, value, pos))
    if not any(k == "ellipsis" for k, _ in entries):
        out += [("slice", slice(None), len(entries))] * (len(shape) - consumed)
    return out


def _plan(shape: tuple[int, ...], index: Any, *, wrap: bool = True, check: bool = True
          ) -> _Plan:
    entries = _expand(shape, index)
    dtype = _index_dtype(shape)
    has_array = any(k in ("array", "bool0") for k, _, _ in entries)
    # operand dimension of every entry that consumes one
    dims, d = [], 0
    for kind, _, _ in entries:
        dims.append(None if kind in _NO_DIM else d)
        d += kind not in _NO_DIM
    advanced = [(i, dims[i]) for i, (k, _, _) in enumerate(entries) if k in ("array", "int")]
    adv_values = {dim: _integer_index(entries[i][1], shape[dim], dim, dtype, wrap=wrap,
                                      check=check) for i, dim in advanced}
    adv_shapes = [abstractify(v).dimensions for v in adv_values.values()] + \
        [v.shape for k, v, _ in entries if k == "bool0"]
    try:
        adv_shape = broadcast_shapes(*adv_shapes)
    except core.ShapeError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together "
                         "with shapes " + " ".join(map(str, adv_shapes))) from None
    # slices: (start, length, step) per dimension
    ranges = {dims[i]: range(*v.indices(shape[dims[i]])) for i, (k, v, _) in enumerate(entries)
              if k == "slice"}
    strided = [dim for dim, r in ranges.items() if r.step != 1]
    offsets = [dim for dim, r in ranges.items() if r.step == 1]
    batch_shape = adv_shape + tuple(len(ranges[dim]) for dim in strided)
    nb, na = len(batch_shape), len(adv_shape)

    # start-index components: (operand dim, value broadcastable to batch_shape)
    components: list[tuple[int, Any]] = []
    for dim in range(len(shape)):
        if dim in adv_values:
            components.append((dim, adv_values[dim]))
        elif dim in strided:
            k = strided.index(dim)
            iota = np.asarray(ranges[dim], dtype=dtype).reshape(
                (1,) * (na + k) + (-1,) + (1,) * (len(strided) - k - 1))
            components.append((dim, iota))
        elif dim in ranges and ranges[dim].start != 0 and len(ranges[dim]):
            components.append((dim, np.asarray(ranges[dim].start, dtype)))
    indices = _stack_components([v for _, v in components], batch_shape, na, dtype)
    collapsed = tuple(sorted(list(adv_values) + strided))
    slice_sizes = tuple(1 if dim in collapsed else len(ranges[dim]) for dim in range(len(shape)))
    dnums = GatherDimensionNumbers(offset_dims=tuple(range(nb, nb + len(offsets))),
                                   collapsed_slice_dims=collapsed,
                                   start_index_map=tuple(dim for dim, _ in components))

    # NumPy's order of the result dimensions
    positions = [p for k, _, p in entries if k in _ADVANCED]
    adjacent = not has_array or positions == list(range(positions[0], positions[-1] + 1)) \
        if positions else True
    order: list[Any] = [] if adjacent else ["adv"]
    for (kind, _, _), dim in zip(entries, dims):
        if kind in _ADVANCED:
            if adjacent and "adv" not in order:
                order.append("adv")
        else:
            order.append("none" if kind == "none" else dim)
    perm: list[int] = []
    result_shape: list[int] = []
    none_positions = []
    for item in order:
        if item == "adv":
            perm += range(na)
            result_shape += adv_shape
        elif item == "none":
            none_positions.append(len(result_shape))
            result_shape.append(1)
        else:
            perm.append(na + strided.index(item) if item in strided else nb + offsets.index(item))
            result_shape.append(len(ranges[item]))
    identity = not components and not batch_shape and slice_sizes == tuple(shape)
    return _Plan(indices, dnums, slice_sizes, tuple(perm), tuple(result_shape),
                 tuple(none_positions), identity)


def _stack_components(values: list[Any], batch_shape: tuple[int, ...], n_adv: int,
                      dtype: np.dtype) -> Any:
    """The start indices ``batch_shape + (K,)``: component k broadcast along the
    batch dimensions (traced components are placed with a one-hot mask, so
    only element-wise ops and broadcasts are needed)."""
    k = len(values)
    concrete = np.zeros(batch_shape + (k,), dtype)
    traced = []
    for j, v in enumerate(values):
        if isinstance(v, Tracer):
            traced.append((j, v))
        else:
            concrete[..., j] = np.broadcast_to(_right_align(np.asarray(v), batch_shape, n_adv),
                                               batch_shape)
    out: Any = concrete
    for j, v in traced:
        v = broadcast_to(v, batch_shape[:n_adv])
        v = broadcast_in_dim(v, batch_shape + (k,), tuple(range(n_adv)))
        if k == 1:
            return v
        one_hot = broadcast_in_dim(np.eye(k, dtype=dtype)[j], batch_shape + (k,),
                                   (len(batch_shape),))
        out = ew.add(out, ew.mul(v, one_hot))
    return out


def _right_align(v: np.ndarray, batch_shape: tuple[int, ...], n_adv: int) -> np.ndarray:
    """An advanced index (broadcast like NumPy within the first ``n_adv``
    dimensions) or an iota already shaped for ``batch_shape``."""
    if v.ndim == len(batch_shape):
        return v
    lead = n_adv - v.ndim
    return v.reshape((1,) * lead + v.shape + (1,) * (len(batch_shape) - n_adv))


# --------------------------------------------------------------------------
# user functions
# --------------------------------------------------------------------------

def advanced_getitem(x: Any, index: Any, *, mode: Any = None, fill_value: Any = None) -> Any:
    """``x[index]`` with NumPy's indexing rules, as one ``gather``."""
    return _plan(abstractify(x).dimensions, index).get(x, mode, fill_value)


def _canonical_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension "
                                      f"{rank}")
    return axis % rank


# mode -> (negative indices wrap once, concrete out-of-bounds indices raise)
_TAKE_MODES = {None: (True, True), "raise": (True, True), "fill": (True, False),
               "clip": (False, False), "wrap": (False, False)}


def _take_mode(mode: str | None, indices: Any, size: int) -> tuple[Any, bool, bool, Any]:
    """(indices, wrap, check, gather mode) for a ``take`` mode."""
    if mode not in _TAKE_MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, _TAKE_MODES))}, got {mode!r}")
    if mode == "wrap":
        if isinstance(indices, Tracer):
            raise NotImplementedError("mode='wrap' needs concrete indices")
        indices = np.mod(np.asarray(indices), size) if size else np.asarray(indices)
    return (indices, *_TAKE_MODES[mode], "fill" if mode == "fill" else None)


def take(a: Any, indices: Any, axis: int | None = None, mode: str | None = None,
         fill_value: Any = None) -> Any:
    """``numpy.take``: ``a[:, ..., indices, ...]`` along ``axis`` (``a`` flattened
    when None).  ``mode``: None/"raise" (negatives wrap; concrete indices out
    of bounds raise; traced ones clamp), "clip" (clamped, no wrapping), "wrap"
    (modulo; concrete indices only), "fill" (JAX's: out of bounds reads
    ``fill_value``)."""
    if axis is None:
        a, axis = reshape(a, (-1,)), 0
    shape = abstractify(a).dimensions
    axis = _canonical_axis(axis, len(shape))
    indices, wrap, check, gather_mode = _take_mode(mode, indices, shape[axis])
    index = (slice(None),) * axis + (indices,)
    return _plan(shape, index, wrap=wrap, check=check).get(a, gather_mode, fill_value)


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: str | None = None,
                    fill_value: Any = None) -> Any:
    """``numpy.take_along_axis``: ``out[..., j, ...] = arr[..., indices[..., j, ...], ...]``
    along ``axis``; the other dimensions broadcast.  One ``gather`` whose
    batching dimensions are all dimensions but ``axis``."""
    if axis is None:
        if abstractify(indices).ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension")
        arr, axis = reshape(arr, (-1,)), 0
    a_shape, i_shape = abstractify(arr).dimensions, abstractify(indices).dimensions
    rank = len(a_shape)
    if len(i_shape) != rank:
        raise ValueError(f"`indices` (shape {i_shape}) and `arr` (shape {a_shape}) must have "
                         f"the same number of dimensions")
    axis = _canonical_axis(axis, rank)
    others = tuple(d for d in range(rank) if d != axis)
    common = broadcast_shapes(*(tuple(s[d] for d in others) for s in (a_shape, i_shape)))
    with_axis = lambda size: tuple(common[:axis]) + (size,) + tuple(common[axis:])  # noqa: E731
    arr = broadcast_to(arr, with_axis(a_shape[axis]))
    dtype = _index_dtype(a_shape)
    indices, wrap, check, gather_mode = _take_mode(mode, indices, a_shape[axis])
    idx = _integer_index(indices, a_shape[axis], axis, dtype, wrap=wrap, check=check)
    idx = broadcast_to(idx, with_axis(i_shape[axis]))
    idx = reshape(idx, abstractify(idx).dimensions + (1,))
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                   start_index_map=(axis,), operand_batching_dims=others,
                                   start_indices_batching_dims=others)
    return lax_indexing.gather(arr, idx, dnums, (1,) * rank, mode=gather_mode,
                               fill_value=fill_value)


# --------------------------------------------------------------------------
# x.at[index].set(v) and friends
# --------------------------------------------------------------------------

_UPDATES = {"add": lax_indexing.scatter_add, "multiply": lax_indexing.scatter_mul,
            "min": lax_indexing.scatter_min, "max": lax_indexing.scatter_max}


class _IndexUpdateRef:
    """``x.at[index]``: functional updates of the elements ``x[index]`` selects
    (JAX's API).  As in JAX, out-of-bounds indices never raise, concrete or
    traced: updates there are dropped, reads clamp (``mode="fill"`` reads
    ``fill_value``)."""

    def __init__(self, x: Any, index: Any):
        self.x, self.index = x, index

    def _plan(self, mode: Any = None) -> _Plan:
        return _plan(abstractify(self.x).dimensions, self.index, check=False)

    def get(self, *, mode: Any = None, fill_value: Any = None, indices_are_sorted: bool = False,
            unique_indices: bool = False) -> Any:
        """``x[index]``; ``mode="fill"`` reads ``fill_value`` out of bounds, "clip" clamps."""
        return self._plan(mode).get(self.x, mode, fill_value)

    def _scatter(self, op: str | None, values: Any, indices_are_sorted: bool,
                 unique_indices: bool, mode: Any) -> Any:
        plan = self._plan(mode)
        updates = plan.updates_for(self.x, values)
        if op is None:
            return lax_indexing.scatter(self.x, plan.indices, updates, plan.scatter_dnums,
                                        indices_are_sorted=indices_are_sorted,
                                        unique_indices=unique_indices, mode=mode)
        return _UPDATES[op](self.x, plan.indices, updates, plan.scatter_dnums,
                            indices_are_sorted=indices_are_sorted,
                            unique_indices=unique_indices, mode=mode)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[index] = values`` (the last of repeated indices wins)."""
        return self._scatter(None, values, indices_are_sorted, unique_indices, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[index] += values``, accumulating repeated indices."""
        return self._scatter("add", values, indices_are_sorted, unique_indices, mode)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self.add(ew.neg(ew.convert_element_type(values, abstractify(self.x).element_type)),
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("multiply", values, indices_are_sorted, unique_indices, mode)

    mul = multiply

    def _factors(self, values, indices_are_sorted, unique_indices, mode):
        """Ones with the ``values`` multiplied in at ``index`` (JAX's way to divide
        and raise at indices: differentiable, repeated indices multiply)."""
        t = abstractify(self.x).element_type
        ones = broadcast_to(ew.convert_element_type(1, t), abstractify(self.x).dimensions)
        return _IndexUpdateRef(ones, self.index).multiply(
            values, indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
            mode=mode)

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[index] /= values``."""
        from ._core import true_divide
        return true_divide(self.x, self._factors(values, indices_are_sorted, unique_indices,
                                                 mode))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[index] **= values``."""
        return ew.pow(self.x, self._factors(values, indices_are_sorted, unique_indices, mode))

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None):
        """``x[index] = func(x[index])`` for a unary ``func`` (applied once per
        occurrence of a repeated index, as JAX's)."""
        plan = self._plan(mode)
        updates = plan.updates_for(self.x, ew.convert_element_type(
            0, abstractify(self.x).element_type))
        return lax_indexing.scatter(self.x, plan.indices, updates, plan.scatter_dnums,
                                    update_computation=lambda old, _: func(old),
                                    indices_are_sorted=indices_are_sorted,
                                    unique_indices=unique_indices, mode=mode)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("min", values, indices_are_sorted, unique_indices, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._scatter("max", values, indices_are_sorted, unique_indices, mode)


class _IndexUpdateHelper:
    """What ``x.at`` returns; ``x.at[index]`` is an ``_IndexUpdateRef``."""

    def __init__(self, x: Any):
        self.x = x

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.x, index)


core.OPERATORS["attr:at"] = _IndexUpdateHelper
core.OPERATORS["attr:take"] = lambda x: lambda indices, axis=None, mode=None, fill_value=None: \
    take(x, indices, axis, mode, fill_value)
