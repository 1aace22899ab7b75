"""Shape and data-movement operations.

XLA's Broadcast, BroadcastInDim, Reshape, Collapse, Transpose, Rev, Slice,
DynamicSlice, DynamicUpdateSlice, Pad, Concatenate, Iota, GetDimensionSize
and SetDimensionSize, plus ``jax.lax``'s ``squeeze`` and ``expand_dims``
(reshapes).  Dimension numbers are XLA's: ``0 .. rank-1``, no negatives
(the NumPy layer resolves those).
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue, Primitive, ShapeError, Tracer, abstractify, array_value
from numxla.tracer.shapes import PrimitiveType as PT, Shape, bf16_from_f32

from ._util import as_int_tuple
from .dtypes import canonical_type, result_type

__all__ = [
    "broadcast", "broadcast_in_dim", "reshape", "collapse", "transpose", "rev", "slice",
    "slice_in_dim", "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_slice",
    "pad", "concatenate", "iota", "broadcasted_iota", "get_dimension_size",
    "set_dimension_size", "squeeze", "expand_dims",
]


# -- shared checks -----------------------------------------------------------------

def _check_dims(op: str, name: str, dims: Sequence[int], rank: int, x: AbstractValue,
                unique: bool = True) -> None:
    """Dimension numbers in ``[0, rank)`` (and distinct, unless told otherwise)."""
    for d in dims:
        if not 0 <= d < rank:
            where = f"{name} {d}" if len(dims) == 1 else f"{name} {tuple(dims)}: {d}"
            raise ShapeError(op, f"{where} is out of range for rank {rank}", x)
    if unique and len(set(dims)) != len(dims):
        raise ShapeError(op, f"{name} {tuple(dims)} contains a repeated dimension", x)


def _check_length(op: str, name: str, values: Sequence[int], x: AbstractValue) -> None:
    if len(values) != x.ndim:
        raise ShapeError(op, f"{name} {tuple(values)} must have one entry per operand "
                             f"dimension (rank {x.ndim})", x)


def _check_start_indices(op: str, x: AbstractValue, starts: Sequence[AbstractValue]) -> None:
    """XLA: one scalar start index per operand dimension, all of one integral type."""
    if len(starts) != x.ndim:
        raise ShapeError(op, f"got {len(starts)} start indices for an operand of rank "
                             f"{x.ndim}", x, *starts)
    for i, s in enumerate(starts):
        if s.ndim != 0 or not s.element_type.is_integral:
            raise ShapeError(op, f"start index {i} must be an integer scalar, got {s.shape}",
                             x, *starts)
    if len({s.element_type for s in starts}) > 1:
        raise ShapeError(op, "start indices must all have the same element type", x, *starts)


def _same_type(op: str, what: str, x: AbstractValue, y: AbstractValue) -> None:
    if x.element_type is not y.element_type:
        raise ShapeError(op, f"{what} element type {y.element_type.short_name} differs from "
                             f"the operand's {x.element_type.short_name}", x, y)


def _convert(x: Any, element_type: PT) -> Any:
    from .elementwise import convert_element_type  # imported late: elementwise uses this module
    return convert_element_type(x, element_type)


def _clamped_starts(starts: Sequence[np.ndarray], dims: Sequence[int], sizes: Sequence[int]
                    ) -> list[int]:
    """The document's ``start = clamp(start, 0, dim - size)`` (negative starts become 0)."""
    return [builtins.min(builtins.max(int(s), 0), d - n) for s, d, n in zip(starts, dims, sizes)]


# Broadcast ---------------------------------------------------------------------
broadcast_p = Primitive("broadcast")


@broadcast_p.def_abstract_eval
def _broadcast_rule(x: AbstractValue, *, sizes: tuple[int, ...]) -> AbstractValue:
    if any(s < 0 for s in sizes):
        raise ShapeError("broadcast", f"sizes {sizes} has a negative dimension", x)
    return array_value(x.element_type, sizes + x.dimensions, x.weak_type)


@broadcast_p.def_impl
def _broadcast_impl(x, *, sizes):
    return np.broadcast_to(x, sizes + x.shape).copy()


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """XLA's Broadcast: new major dimensions ``sizes`` are prepended;
    ``output[i0..iN, j0..jM] = operand[j0..jM]``."""
    sizes = as_int_tuple("broadcast", "sizes", sizes)
    return operand if not sizes else broadcast_p.bind(operand, sizes=sizes)


# BroadcastInDim ----------------------------------------------------------------
broadcast_in_dim_p = Primitive("broadcast_in_dim")


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_rule(x: AbstractValue, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...]) -> AbstractValue:
    op = "broadcast_in_dim"
    if len(broadcast_dimensions) != x.ndim:
        raise ShapeError(op, f"broadcast_dimensions {broadcast_dimensions} must have one entry "
                             f"per operand dimension (rank {x.ndim})", x)
    if any(d < 0 for d in shape):
        raise ShapeError(op, f"shape {shape} has a negative dimension", x)
    if len(set(broadcast_dimensions)) != len(broadcast_dimensions) or \
            list(broadcast_dimensions) != sorted(broadcast_dimensions):
        raise ShapeError(op, f"broadcast_dimensions {broadcast_dimensions} must be strictly "
                             f"increasing", x)
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape):
            raise ShapeError(op, f"broadcast_dimensions {broadcast_dimensions}: {d} is out of "
                                 f"range for result shape {shape}", x)
        if x.dimensions[i] not in (1, shape[d]):
            raise ShapeError(op, f"operand dimension {i} of size {x.dimensions[i]} cannot "
                                 f"broadcast to result dimension {d} of size {shape[d]}", x)
    return array_value(x.element_type, shape, x.weak_type)


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape).copy()


def broadcast_in_dim(operand: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]
                     ) -> Any:
    """XLA's BroadcastInDim: operand dimension ``i`` becomes result dimension
    ``broadcast_dimensions[i]`` (size-1 dimensions stretch)."""
    shape = as_int_tuple("broadcast_in_dim", "shape", shape)
    dims = as_int_tuple("broadcast_in_dim", "broadcast_dimensions", broadcast_dimensions)
    if abstractify(operand).dimensions == shape and dims == tuple(range(len(shape))):
        return operand
    return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims)


# Reshape ---------------------------------------------------------------------
reshape_p = Primitive("reshape")


@reshape_p.def_abstract_eval
def _reshape_rule(x: AbstractValue, *, new_sizes: tuple[int, ...]) -> AbstractValue:
    if any(d < 0 for d in new_sizes):
        raise ShapeError("reshape", f"new_sizes {new_sizes} has a negative dimension", x)
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise ShapeError("reshape", f"new_sizes {new_sizes} has "
                                    f"{int(np.prod(new_sizes, dtype=np.int64))} elements, "
                                    f"the operand {x.size}", x)
    return array_value(x.element_type, new_sizes, x.weak_type)


@reshape_p.def_impl
def _reshape_impl(x, *, new_sizes):
    return x.reshape(new_sizes)


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None
            ) -> Any:
    """XLA's Reshape: the row-major element sequence is kept.  ``dimensions``
    (XLA's ``Reshape(operand, dimensions, new_sizes)`` form, as in
    ``jax.lax.reshape``) transposes the operand first; one ``-1`` in
    ``new_sizes`` is inferred."""
    aval = abstractify(operand)
    sizes = list(as_int_tuple("reshape", "new_sizes", new_sizes))
    if sizes.count(-1) > 1:
        raise ShapeError("reshape", f"new_sizes {tuple(sizes)} may contain at most one -1", aval)
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
        if known == 0 or aval.size % known:
            raise ShapeError("reshape", f"cannot infer -1 in new_sizes {tuple(sizes)}", aval)
        sizes[sizes.index(-1)] = aval.size // known
    if dimensions is not None:
        operand = transpose(operand, dimensions)
    if abstractify(operand).dimensions == tuple(sizes):
        return operand
    return reshape_p.bind(operand, new_sizes=tuple(sizes))


# Collapse --------------------------------------------------------------------
collapse_p = Primitive("collapse")


@collapse_p.def_abstract_eval
def _collapse_rule(x: AbstractValue, *, dimensions: tuple[int, ...]) -> AbstractValue:
    _check_dims("collapse", "dimensions", dimensions, x.ndim, x)
    first = dimensions[0] if dimensions else 0
    if not dimensions or dimensions != tuple(range(first, first + len(dimensions))):
        raise ShapeError("collapse", f"dimensions {dimensions} must be a non-empty run of "
                                     f"consecutive dimensions in increasing order", x)
    dims = x.dimensions
    merged = int(np.prod(dims[first:first + len(dimensions)], dtype=np.int64))
    return array_value(x.element_type, dims[:first] + (merged,) + dims[first + len(dimensions):],
                       x.weak_type)


@collapse_p.def_impl
def _collapse_impl(x, *, dimensions):
    first, last = dimensions[0], dimensions[-1] + 1
    merged = int(np.prod(x.shape[first:last], dtype=np.int64))
    return x.reshape(x.shape[:first] + (merged,) + x.shape[last:])


def collapse(operand: Any, dimensions: Sequence[int] | int,
             stop_dimension: int | None = None) -> Any:
    """XLA's Collapse: the consecutive, in-order ``dimensions`` are replaced, in
    place, by one dimension of their product (the lowest number is the most
    major), as ``XlaBuilder::Collapse`` does: ``f32[4,2,3]`` collapsed over
    ``{0,1}`` is ``f32[8,3]``.  (The semantics document's example shows the
    results of ``{0,1}`` and ``{1,2}`` swapped; XLA's behaviour is the truth.)
    Fewer than two dimensions collapse nothing.  JAX's form
    ``collapse(operand, start_dimension, stop_dimension=None)`` (an int, then
    the end of the half-open range, the rank if None) is accepted too."""
    if isinstance(dimensions, (int, np.integer)):
        rank = abstractify(operand).ndim
        start = int(dimensions) % rank if rank else 0
        stop = rank if stop_dimension is None else int(stop_dimension)
        dimensions = range(start, stop % rank if stop < 0 else stop)
    dims = as_int_tuple("collapse", "dimensions", dimensions)
    if len(dims) <= 1:
        aval = abstractify(operand)
        _check_dims("collapse", "dimensions", dims, aval.ndim, aval)
        return operand
    return collapse_p.bind(operand, dimensions=dims)


# Transpose -------------------------------------------------------------------
transpose_p = Primitive("transpose")


@transpose_p.def_abstract_eval
def _transpose_rule(x: AbstractValue, *, permutation: tuple[int, ...]) -> AbstractValue:
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError("transpose", f"permutation {permutation} is not a permutation of "
                                      f"0..{x.ndim - 1}", x)
    return array_value(x.element_type, tuple(x.dimensions[p] for p in permutation), x.weak_type)


@transpose_p.def_impl
def _transpose_impl(x, *, permutation):
    return np.transpose(x, permutation).copy()


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """XLA's Transpose: result dimension ``i`` is operand dimension ``permutation[i]``."""
    perm = as_int_tuple("transpose", "permutation", permutation)
    if perm == tuple(range(len(perm))) and len(perm) == abstractify(operand).ndim:
        return operand
    return transpose_p.bind(operand, permutation=perm)


# Rev -------------------------------------------------------------------------
rev_p = Primitive("rev")


@rev_p.def_abstract_eval
def _rev_rule(x: AbstractValue, *, dimensions: tuple[int, ...]) -> AbstractValue:
    _check_dims("rev", "dimensions", dimensions, x.ndim, x)
    return x.strip_layout()


@rev_p.def_impl
def _rev_impl(x, *, dimensions):
    return np.flip(x, dimensions).copy()


def rev(operand: Any, dimensions: Sequence[int]) -> Any:
    """XLA's Rev: index ``i`` of each dimension in ``dimensions`` (of size N)
    becomes ``N - 1 - i``."""
    dims = as_int_tuple("rev", "dimensions", dimensions)
    return operand if not dims else rev_p.bind(operand, dimensions=dims)


# Slice -----------------------------------------------------------------------
slice_p = Primitive("slice")


@slice_p.def_abstract_eval
def _slice_rule(x: AbstractValue, *, start_indices: tuple[int, ...],
                limit_indices: tuple[int, ...], strides: tuple[int, ...]) -> AbstractValue:
    for name, values in (("start_indices", start_indices), ("limit_indices", limit_indices),
                         ("strides", strides)):
        _check_length("slice", name, values, x)
    out = []
    for d, (start, limit, stride, size) in enumerate(zip(start_indices, limit_indices, strides,
                                                         x.dimensions)):
        if start < 0:
            raise ShapeError("slice", f"start_indices[{d}] = {start} is negative", x)
        if limit > size:
            raise ShapeError("slice", f"limit_indices[{d}] = {limit} is past the end of "
                                      f"dimension {d} (size {size})", x)
        if limit < start:
            raise ShapeError("slice", f"limit_indices[{d}] = {limit} is less than "
                                      f"start_indices[{d}] = {start}", x)
        if stride < 1:
            raise ShapeError("slice", f"strides[{d}] = {stride} must be >= 1", x)
        out.append(-(-(limit - start) // stride))
    return array_value(x.element_type, out, x.weak_type)


@slice_p.def_impl
def _slice_impl(x, *, start_indices, limit_indices, strides):
    return x[tuple(builtins.slice(s, l, st)
                   for s, l, st in zip(start_indices, limit_indices, strides))].copy()


def slice(operand: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    """XLA's Slice: ``[start, limit)`` of each dimension, every ``strides[d]``-th element."""
    starts = as_int_tuple("slice", "start_indices", start_indices)
    limits = as_int_tuple("slice", "limit_indices", limit_indices)
    steps = (1,) * len(starts) if strides is None else as_int_tuple("slice", "strides", strides)
    aval = abstractify(operand)
    if starts == (0,) * aval.ndim and limits == aval.dimensions and steps == (1,) * aval.ndim:
        return operand
    return slice_p.bind(operand, start_indices=starts, limit_indices=limits, strides=steps)


def slice_in_dim(operand: Any, start_index: int, limit_index: int, stride: int = 1,
                 axis: int = 0) -> Any:
    """``slice`` along one dimension (``jax.lax.slice_in_dim``)."""
    dims = abstractify(operand).dimensions
    starts, limits, strides = [0] * len(dims), list(dims), [1] * len(dims)
    starts[axis], limits[axis], strides[axis] = start_index, limit_index, stride
    return slice(operand, starts, limits, strides)


# DynamicSlice / DynamicUpdateSlice ------------------------------------------------
dynamic_slice_p = Primitive("dynamic_slice")


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_rule(x: AbstractValue, *starts: AbstractValue,
                        slice_sizes: tuple[int, ...]) -> AbstractValue:
    _check_start_indices("dynamic_slice", x, starts)
    _check_length("dynamic_slice", "slice_sizes", slice_sizes, x)
    for d, (n, size) in enumerate(zip(slice_sizes, x.dimensions)):
        if not 0 <= n <= size:
            raise ShapeError("dynamic_slice", f"slice_sizes[{d}] = {n} must be in [0, {size}] "
                                              f"(the size of dimension {d})", x)
    return array_value(x.element_type, slice_sizes, x.weak_type)


@dynamic_slice_p.def_impl
def _dynamic_slice_impl(x, *starts, slice_sizes):
    begin = _clamped_starts(starts, x.shape, slice_sizes)
    return x[tuple(builtins.slice(b, b + n) for b, n in zip(begin, slice_sizes))].copy()


dynamic_update_slice_p = Primitive("dynamic_update_slice")


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_rule(x: AbstractValue, update: AbstractValue,
                               *starts: AbstractValue) -> AbstractValue:
    op = "dynamic_update_slice"
    _check_start_indices(op, x, starts)
    _same_type(op, "update", x, update)
    if update.ndim != x.ndim:
        raise ShapeError(op, f"update has rank {update.ndim}, the operand {x.ndim}", x, update)
    for d, (n, size) in enumerate(zip(update.dimensions, x.dimensions)):
        if n > size:
            raise ShapeError(op, f"update dimension {d} (size {n}) is larger than the "
                                 f"operand's (size {size})", x, update)
    return x.strip_layout()


@dynamic_update_slice_p.def_impl
def _dynamic_update_slice_impl(x, update, *starts):
    begin = _clamped_starts(starts, x.shape, update.shape)
    out = x.copy()
    out[tuple(builtins.slice(b, b + n) for b, n in zip(begin, update.shape))] = update
    return out


def _as_start_indices(start_indices: Any) -> list[Any]:
    """Start indices as a list of integer scalars of one element type (Python
    ints are weak; a rank-1 index array is split into its elements)."""
    if isinstance(start_indices, (Tracer, np.ndarray)) and abstractify(start_indices).ndim == 1:
        n = abstractify(start_indices).dimensions[0]
        starts = [reshape(slice(start_indices, (i,), (i + 1,)), ()) for i in range(n)]
    elif isinstance(start_indices, (int, np.integer, Tracer)) or \
            (isinstance(start_indices, np.ndarray) and start_indices.ndim == 0):
        starts = [start_indices]
    else:
        starts = list(start_indices)
    if not starts:
        return []
    target, _weak = result_type(*starts)
    return [_convert(s, target) if abstractify(s).element_type is not target
            or abstractify(s).weak_type else s for s in starts]


def _wrapped_starts(starts: list[Any], dims: Sequence[int],
                    allow_negative_indices: bool | Sequence[bool]) -> list[Any]:
    """JAX's reading of start indices: a negative one counts from the end of
    its dimension (``start + dim``) before XLA's clamp, where allowed."""
    allowed = ([allow_negative_indices] * len(starts) if isinstance(allow_negative_indices, bool)
               else list(allow_negative_indices))
    out = []
    for start, dim, wrap in zip(starts, dims, allowed):
        if wrap and isinstance(start, (int, np.integer)) and not isinstance(start, bool):
            if start < 0 and isinstance(start, np.integer):   # of a type that holds dim
                wide = np.int32 if dim < 2 ** 31 else np.int64
                kind = start.dtype if dim <= np.iinfo(start.dtype).max else np.dtype(wide)
                start = kind.type(int(start) + dim)
            elif start < 0:
                start = start + dim
        elif wrap and abstractify(start).element_type.is_signed:
            from .elementwise import add, lt, select
            t = abstractify(start).element_type
            if dim > np.iinfo(t.numpy_dtype).max:      # s8 starts into 300 elements...
                t = PT.S32 if dim < 2 ** 31 else PT.S64
                start = _convert(start, t)
            start = select(lt(start, _convert(0, t)), add(start, _convert(dim, t)), start)
        out.append(start)
    return out


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """XLA's DynamicSlice: ``slice_sizes`` elements from run-time scalar
    ``start_indices``, each clamped to ``[0, dim - size]``; as JAX's, a
    negative start first counts from the end (``allow_negative_indices=False``:
    XLA's op alone)."""
    sizes = as_int_tuple("dynamic_slice", "slice_sizes", slice_sizes)
    starts = _wrapped_starts(_as_start_indices(start_indices), abstractify(operand).dimensions,
                             allow_negative_indices)
    return dynamic_slice_p.bind(operand, *_as_start_indices(starts), slice_sizes=sizes)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    """``dynamic_slice`` along one dimension (``jax.lax.dynamic_slice_in_dim``)."""
    dims = abstractify(operand).dimensions
    starts: list[Any] = [0] * len(dims)
    starts[axis] = start_index
    sizes = list(dims)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """XLA's DynamicUpdateSlice: ``operand`` with ``update`` written at
    ``start_indices``, each clamped to ``[0, dim - update_dim]``; negative
    starts as in :func:`dynamic_slice`."""
    starts = _wrapped_starts(_as_start_indices(start_indices), abstractify(operand).dimensions,
                             allow_negative_indices)
    return dynamic_update_slice_p.bind(operand, update, *_as_start_indices(starts))


# Pad -------------------------------------------------------------------------
pad_p = Primitive("pad")


@pad_p.def_abstract_eval
def _pad_rule(x: AbstractValue, padding_value: AbstractValue, *,
              padding_config: tuple[tuple[int, int, int], ...]) -> AbstractValue:
    if padding_value.ndim != 0:
        raise ShapeError("pad", f"padding_value must be a scalar, got {padding_value.shape}",
                         x, padding_value)
    _same_type("pad", "padding_value", x, padding_value)
    if len(padding_config) != x.ndim:
        raise ShapeError("pad", f"padding_config has {len(padding_config)} entries for an "
                                f"operand of rank {x.ndim}", x)
    out = []
    for d, ((low, high, interior), size) in enumerate(zip(padding_config, x.dimensions)):
        if interior < 0:
            raise ShapeError("pad", f"padding_config[{d}] interior padding {interior} is "
                                    f"negative", x)
        n = low + high + size + builtins.max(size - 1, 0) * interior
        if n < 0:
            raise ShapeError("pad", f"padding_config[{d}] = {(low, high, interior)} gives "
                                    f"dimension {d} the negative size {n}", x)
        out.append(n)
    return array_value(x.element_type, out, x.weak_type)


@pad_p.def_impl
def _pad_impl(x, padding_value, *, padding_config):
    # interior padding and positive edges first, then negative edges cut.
    grown = [builtins.max(lo, 0) + n + builtins.max(n - 1, 0) * i + builtins.max(hi, 0)
             for (lo, hi, i), n in zip(padding_config, x.shape)]
    out = np.full(grown, padding_value, dtype=x.dtype)
    out[tuple(_every(builtins.max(lo, 0), n, i + 1)
              for (lo, _, i), n in zip(padding_config, x.shape))] = x
    return out[tuple(builtins.slice(builtins.max(-lo, 0), g - builtins.max(-hi, 0))
                     for (lo, hi, _), g in zip(padding_config, grown))].copy()


def _every(start: int, count: int, step: int) -> builtins.slice:
    """The slice of ``count`` positions ``start, start + step, ...``."""
    return builtins.slice(start, start + (count - 1) * step + 1 if count else start, step)


def pad(operand: Any, padding_value: Any, padding_config: Sequence[Sequence[int]]) -> Any:
    """XLA's Pad: per dimension ``(low, high, interior)``; interior padding
    goes between elements first, then edges are added (or, negative, cut)."""
    config = tuple(as_int_tuple("pad", "padding_config entry", c) for c in padding_config)
    for c in config:
        if len(c) != 3:
            raise ShapeError("pad", f"padding_config entries must be (low, high, interior) "
                                    f"triples, got {c}", abstractify(operand))
    return pad_p.bind(operand, _like(operand, padding_value), padding_config=config)


def _like(x: Any, scalar: Any) -> Any:
    """A weakly typed scalar (Python number) in ``x``'s element type."""
    aval = abstractify(scalar)
    if not aval.weak_type:
        return scalar
    target = abstractify(x).element_type
    if isinstance(scalar, Tracer) or target is PT.BF16:  # bf16 constants need a convert
        return _convert(scalar if isinstance(scalar, Tracer) else np.float32(scalar), target)
    return np.asarray(scalar).astype(target.numpy_dtype)


# Concatenate -------------------------------------------------------------------
concatenate_p = Primitive("concatenate")


@concatenate_p.def_abstract_eval
def _concatenate_rule(*xs: AbstractValue, dimension: int) -> AbstractValue:
    if not xs:
        raise ShapeError("concatenate", "needs at least one operand")
    first = xs[0]
    if first.ndim == 0:
        raise ShapeError("concatenate", "rank-0 operands cannot be concatenated", *xs)
    if not 0 <= dimension < first.ndim:
        raise ShapeError("concatenate", f"dimension {dimension} is out of range for rank "
                                        f"{first.ndim}", *xs)
    for i, x in enumerate(xs[1:], 1):
        if x.element_type is not first.element_type:
            raise ShapeError("concatenate", f"operand {i} has element type "
                                            f"{x.element_type.short_name}, operand 0 "
                                            f"{first.element_type.short_name}", *xs)
        if x.ndim != first.ndim:
            raise ShapeError("concatenate", f"operand {i} has rank {x.ndim}, operand 0 "
                                            f"{first.ndim}", *xs)
        for d, (a, b) in enumerate(zip(first.dimensions, x.dimensions)):
            if d != dimension and a != b:
                raise ShapeError("concatenate", f"operand {i} differs from operand 0 in "
                                                f"dimension {d} ({b} vs {a}); only dimension "
                                                f"{dimension} may differ", *xs)
    dims = list(first.dimensions)
    dims[dimension] = builtins.sum(x.dimensions[dimension] for x in xs)
    return array_value(first.element_type, dims, all(x.weak_type for x in xs))


@concatenate_p.def_impl
def _concatenate_impl(*xs, dimension):
    return np.concatenate(xs, axis=dimension)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    """XLA's Concatenate (ConcatInDim): operands equal except in ``dimension``."""
    operands = list(operands)
    if len(operands) == 1:
        _concatenate_rule(abstractify(operands[0]), dimension=int(dimension))
        return operands[0]
    return concatenate_p.bind(*operands, dimension=int(dimension))


# Iota ------------------------------------------------------------------------
iota_p = Primitive("iota")


@iota_p.def_abstract_eval
def _iota_rule(*, dtype: PT, shape: tuple[int, ...], dimension: int) -> AbstractValue:
    if not isinstance(dtype, PT) or not dtype.is_array or dtype is PT.PRED:
        raise ShapeError("iota", f"dtype must be an integer, floating-point or complex type, "
                                 f"got {getattr(dtype, 'short_name', dtype)}")
    if any(d < 0 for d in shape):
        raise ShapeError("iota", f"shape {shape} has a negative dimension")
    if not 0 <= dimension < len(shape):
        raise ShapeError("iota", f"dimension {dimension} is out of range for shape {shape} "
                                 f"(rank {len(shape)})")
    return array_value(dtype, shape)


@iota_p.def_impl
def _iota_impl(*, dtype, shape, dimension):
    along = [1] * len(shape)
    along[dimension] = shape[dimension]
    counts = np.broadcast_to(np.arange(shape[dimension], dtype=np.int64).reshape(along), shape)
    if dtype is PT.BF16:  # ConvertElementType of an integer iota
        return bf16_from_f32(counts.astype(np.float32))
    return counts.astype(dtype.numpy_dtype)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """XLA's Iota: ``shape``'d values counting 0, 1, ... along ``dimension``."""
    return iota_p.bind(dtype=canonical_type(dtype),
                       shape=as_int_tuple("iota", "shape", shape), dimension=int(dimension))


def iota(dtype: Any, size: int) -> Any:
    """``[0, 1, ..., size - 1]`` of element type ``dtype``."""
    return broadcasted_iota(dtype, (int(size),), 0)


# GetDimensionSize / SetDimensionSize -------------------------------------------
# Bounded dynamic dimensions: set_dimension_size marks a dimension dynamic
# (``f32[<=10]``), keeping the static size as its bound.  Eager values carry
# their run-time sizes (tracer.core.DynamicArray) and reference semantics see
# operands cut to them, so padding never takes part in a computation.

get_dimension_size_p = Primitive("get_dimension_size")


@get_dimension_size_p.def_abstract_eval
def _get_dimension_size_rule(x: AbstractValue, *, dimension: int) -> AbstractValue:
    if not x.shape.is_array:
        raise ShapeError("get_dimension_size", "operand must be an array", x)
    _check_dims("get_dimension_size", "dimension", (dimension,), x.ndim, x)
    return array_value(PT.S32, ())


@get_dimension_size_p.def_impl
def _get_dimension_size_impl(x, *, dimension):
    return np.int32(x.shape[dimension])  # the run-time size (x is cut to it)


set_dimension_size_p = Primitive("set_dimension_size")


@set_dimension_size_p.def_abstract_eval
def _set_dimension_size_rule(x: AbstractValue, size: AbstractValue, *, dimension: int
                             ) -> AbstractValue:
    if not x.shape.is_array:
        raise ShapeError("set_dimension_size", "operand must be an array", x)
    _check_dims("set_dimension_size", "dimension", (dimension,), x.ndim, x)
    if size.ndim != 0 or size.element_type is not PT.S32:
        raise ShapeError("set_dimension_size", f"size must be an s32 scalar, got {size.shape}",
                         x, size)
    flags = list(x.shape.dynamic_dimensions or (False,) * x.ndim)
    flags[dimension] = True
    return AbstractValue(Shape(x.element_type, x.dimensions, dynamic_dimensions=tuple(flags)),
                         x.weak_type)


@set_dimension_size_p.def_impl
def _set_dimension_size_impl(x, size, *, dimension):
    index = [builtins.slice(None)] * x.ndim
    index[dimension] = builtins.slice(0, builtins.min(builtins.max(int(size), 0),
                                                      x.shape[dimension]))
    return x[tuple(index)]  # the run-time extent; the interpreter pads it to the bound


def get_dimension_size(operand: Any, dimension: int) -> Any:
    """XLA's GetDimensionSize: the (run-time) size of ``dimension`` as an s32 scalar."""
    return get_dimension_size_p.bind(operand, dimension=int(dimension))


def set_dimension_size(operand: Any, size: Any, dimension: int) -> Any:
    """XLA's SetDimensionSize: ``operand`` with ``dimension`` given the dynamic
    (run-time, s32) ``size``; the static size stays as its bound, and the
    elements past ``size`` are padding (zero)."""
    aval = abstractify(operand)
    if isinstance(size, (int, np.integer)):
        dim = int(dimension)
        if 0 <= dim < aval.ndim and not 0 <= int(size) <= aval.dimensions[dim]:
            raise ShapeError("set_dimension_size", f"size {int(size)} is outside [0, "
                                                   f"{aval.dimensions[dim]}], the bound of "
                                                   f"dimension {dim}", aval)
        size = np.int32(size)
    elif abstractify(size).weak_type:
        size = _convert(size, PT.S32)
    return set_dimension_size_p.bind(operand, size, dimension=int(dimension))


# Squeeze / ExpandDims (jax.lax; reshapes) -----------------------------------------

def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """Remove the size-1 ``dimensions`` (a reshape)."""
    aval = abstractify(array)
    dims = as_int_tuple("squeeze", "dimensions", dimensions)
    _check_dims("squeeze", "dimensions", dims, aval.ndim, aval)
    for d in dims:
        if aval.dimensions[d] != 1:
            raise ShapeError("squeeze", f"dimensions {dims}: dimension {d} has size "
                                        f"{aval.dimensions[d]}, not 1", aval)
    return reshape(array, [n for i, n in enumerate(aval.dimensions) if i not in dims])


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """Insert size-1 dimensions at ``dimensions`` (positions in the result; a reshape)."""
    aval = abstractify(array)
    dims = as_int_tuple("expand_dims", "dimensions", dimensions)
    rank = aval.ndim + len(dims)
    _check_dims("expand_dims", "dimensions", dims, rank, aval)
    sizes = iter(aval.dimensions)
    return reshape(array, [1 if i in dims else next(sizes) for i in range(rank)])
