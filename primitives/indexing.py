"""Gather and Scatter with full dimension numbers (including batching dimensions).

Conventions (as in ``jax.lax``): the *index vector dimension* of
``start_indices``/``scatter_indices`` is their last dimension; the user
functions also take XLA's explicit ``index_vector_dim`` and move it last
(``index_vector_dim == rank`` means an implicit trailing dimension of size 1).

* ``gather``: XLA's semantics: output index ``Out`` reads operand index
  ``In = Sin + Oin``, where ``Sin`` scatters the start index vector picked by
  the batch dimensions of ``Out`` through ``start_index_map`` (and the batch
  coordinates through ``operand_batching_dims``), and ``Oin`` places the offset
  dimensions of ``Out`` in the operand dimensions that are not collapsed.
  Start indices are clamped so that the whole slice fits (XLA's behaviour);
  ``mode="fill"`` instead returns ``fill_value`` for out-of-bounds slices.
* ``scatter``: for every update index ``U``, ``I = Sin + Win`` as in the
  document; ``output[I] = update_computation(output[I], updates[U])``.  An
  update window that does not fit in the operand is skipped entirely (XLA's
  behaviour); ``mode="clip"`` clamps the indices first.  ``scatter`` (any
  computation, ``None`` replaces; variadic) returns a tuple at primitive
  level; ``scatter_add``/``scatter_mul``/``scatter_min``/``scatter_max`` are
  primitives of their own (as in JAX, so that autodiff rules can key on them:
  ``scatter_add`` is the transpose of ``gather``).
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue, Primitive, ShapeError, abstractify, array_value
from numxla.tracer.graph import Graph
from numxla.tracer.shapes import PrimitiveType as PT

from ._subgraph import scalar_avals, trace_computation
from ._util import as_int_tuple, check_kinds
from .elementwise import ElementwisePrimitive, narrow, widen
from .reductions import apply_computation, single_binary_op

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
           "gather", "scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]

INDEX_KINDS = ("signed", "unsigned")


class GatherScatterMode(enum.Enum):
    """Out-of-bounds behaviour of the user functions (names as in JAX).

    ``CLIP``: indices are clamped so the slice/window fits (XLA's Gather).
    ``FILL_OR_DROP``: out-of-bounds gathers return ``fill_value``; out-of-bounds
    scatter windows are skipped (XLA's Scatter).  ``PROMISE_IN_BOUNDS``: the
    caller promises in-bounds indices; XLA's native behaviour is used.
    """
    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"

    @classmethod
    def from_any(cls, mode: Any) -> "GatherScatterMode | None":
        if mode is None or isinstance(mode, cls):
            return mode
        names = {"clip": cls.CLIP, "fill": cls.FILL_OR_DROP, "drop": cls.FILL_OR_DROP,
                 "fill_or_drop": cls.FILL_OR_DROP, "promise_in_bounds": cls.PROMISE_IN_BOUNDS}
        if isinstance(mode, str) and mode.lower() in names:
            return names[mode.lower()]
        raise ValueError(f"mode must be one of 'clip', 'fill', 'drop', 'promise_in_bounds' "
                         f"or a GatherScatterMode, got {mode!r}")


def _tuples(obj: Any) -> None:
    for name in obj.__dataclass_fields__:
        object.__setattr__(obj, name, as_int_tuple(type(obj).__name__, name, getattr(obj, name)))


@dataclass(frozen=True)
class GatherDimensionNumbers:
    """Gather's dimension numbers (JAX's field names; the index vector is the
    last dimension of ``start_indices``)."""
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()

    __post_init__ = _tuples


@dataclass(frozen=True)
class ScatterDimensionNumbers:
    """Scatter's dimension numbers (JAX's field names; the index vector is the
    last dimension of ``scatter_indices``)."""
    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()

    __post_init__ = _tuples


# --------------------------------------------------------------------------
# shape rules
# --------------------------------------------------------------------------

def _check_dim_list(op: str, name: str, dims: tuple[int, ...], bound: int,
                    avals: Sequence[AbstractValue], *, must_sort: bool = True) -> None:
    """``dims`` are distinct, in ``[0, bound)`` and (if ``must_sort``) ascending."""
    for d in dims:
        if not 0 <= d < bound:
            raise ShapeError(op, f"{name} {dims}: dimension {d} is out of range [0, {bound})",
                             *avals)
    if len(set(dims)) != len(dims):
        raise ShapeError(op, f"{name} {dims} repeats a dimension", *avals)
    if must_sort and list(dims) != sorted(dims):
        raise ShapeError(op, f"{name} {dims} must be sorted in ascending order", *avals)


def _check_disjoint(op: str, name_a: str, a: tuple[int, ...], name_b: str, b: tuple[int, ...],
                    avals: Sequence[AbstractValue]) -> None:
    common = sorted(set(a) & set(b))
    if common:
        raise ShapeError(op, f"{name_a} {a} and {name_b} {b} share dimension(s) {common}",
                         *avals)


def _check_indices(op: str, what: str, indices: AbstractValue,
                   avals: Sequence[AbstractValue]) -> None:
    check_kinds(op, indices, INDEX_KINDS, what)
    if indices.ndim < 1:
        raise ShapeError(op, f"{what} must have rank >= 1: its last dimension holds the index "
                             f"vectors", *avals)


def _check_batching(op: str, operand: AbstractValue, indices: AbstractValue,
                    operand_dims: tuple[int, ...], index_dims: tuple[int, ...],
                    names: tuple[str, str], avals: Sequence[AbstractValue]) -> None:
    """Batching dimensions of operand and indices pair up and have equal sizes."""
    _check_dim_list(op, names[0], operand_dims, operand.ndim, avals)
    _check_dim_list(op, names[1], index_dims, indices.ndim - 1, avals, must_sort=False)
    if len(operand_dims) != len(index_dims):
        raise ShapeError(op, f"{names[0]} {operand_dims} and {names[1]} {index_dims} must "
                             f"have the same length", *avals)
    for od, idd in zip(operand_dims, index_dims):
        if operand.dimensions[od] != indices.dimensions[idd]:
            raise ShapeError(op, f"batching dimension {od} of the operand (size "
                                 f"{operand.dimensions[od]}) and dimension {idd} of the "
                                 f"indices (size {indices.dimensions[idd]}) must have equal "
                                 f"sizes", *avals)


def _index_map_check(op: str, name: str, index_map: tuple[int, ...], indices: AbstractValue,
                     operand: AbstractValue, batching: tuple[int, ...],
                     avals: Sequence[AbstractValue]) -> None:
    if len(index_map) != indices.dimensions[-1]:
        raise ShapeError(op, f"{name} {index_map} must have one entry per index vector element "
                             f"(the last dimension of the indices has size "
                             f"{indices.dimensions[-1]})", *avals)
    _check_dim_list(op, name, index_map, operand.ndim, avals, must_sort=False)
    _check_disjoint(op, name, index_map, "operand_batching_dims", batching, avals)


def _interleave(rank: int, placed: tuple[int, ...], placed_sizes: Sequence[int],
                other_sizes: Sequence[int]) -> list[int]:
    """Dimensions of rank ``rank``: positions ``placed`` take ``placed_sizes``,
    the others take ``other_sizes`` in order."""
    placed_iter, other_iter = iter(placed_sizes), iter(other_sizes)
    return [next(placed_iter) if i in placed else next(other_iter) for i in range(rank)]


def _gather_rule(operand: AbstractValue, indices: AbstractValue, *,
                 dimension_numbers: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                 indices_are_sorted: bool, unique_indices: bool) -> AbstractValue:
    op, dn, avals = "gather", dimension_numbers, (operand, indices)
    _check_indices(op, "start_indices", indices, avals)
    batch_shape = indices.dimensions[:-1]
    out_rank = len(dn.offset_dims) + len(batch_shape)
    _check_dim_list(op, "offset_dims", dn.offset_dims, out_rank, avals)
    _check_dim_list(op, "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim, avals)
    _check_batching(op, operand, indices, dn.operand_batching_dims,
                    dn.start_indices_batching_dims,
                    ("operand_batching_dims", "start_indices_batching_dims"), avals)
    _check_disjoint(op, "collapsed_slice_dims", dn.collapsed_slice_dims,
                    "operand_batching_dims", dn.operand_batching_dims, avals)
    removed = len(dn.collapsed_slice_dims) + len(dn.operand_batching_dims)
    if len(dn.offset_dims) + removed != operand.ndim:
        raise ShapeError(op, f"offset_dims {dn.offset_dims} + collapsed_slice_dims "
                             f"{dn.collapsed_slice_dims} + operand_batching_dims "
                             f"{dn.operand_batching_dims} must count the operand rank "
                             f"{operand.ndim}", *avals)
    _index_map_check(op, "start_index_map", dn.start_index_map, indices, operand,
                     dn.operand_batching_dims, avals)
    if len(slice_sizes) != operand.ndim:
        raise ShapeError(op, f"slice_sizes {slice_sizes} must have one entry per operand "
                             f"dimension (rank {operand.ndim})", *avals)
    for d, (s, bound) in enumerate(zip(slice_sizes, operand.dimensions)):
        if not 0 <= s <= bound:
            raise ShapeError(op, f"slice_sizes {slice_sizes}: size {s} of dimension {d} must "
                                 f"be in [0, {bound}]", *avals)
    for name, dims in (("collapsed_slice_dims", dn.collapsed_slice_dims),
                       ("operand_batching_dims", dn.operand_batching_dims)):
        for d in dims:
            if slice_sizes[d] > 1:
                raise ShapeError(op, f"slice_sizes {slice_sizes}: dimension {d} is in {name} "
                                     f"and must have slice size <= 1, got {slice_sizes[d]}",
                                 *avals)
    offset_sizes = [s for d, s in enumerate(slice_sizes)
                    if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    dims = _interleave(out_rank, dn.offset_dims, offset_sizes, batch_shape)
    return array_value(operand.element_type, dims, operand.weak_type)


def _scatter_check(op: str, operands: Sequence[AbstractValue], indices: AbstractValue,
                   updates: Sequence[AbstractValue], dn: ScatterDimensionNumbers) -> None:
    """XLA's constraints on Scatter's arguments (the document's list)."""
    avals = (*operands, indices, *updates)
    first, upd = operands[0], updates[0]
    if any(o.dimensions != first.dimensions for o in operands):
        raise ShapeError(op, "all operands must have the same dimensions", *avals)
    if any(u.dimensions != upd.dimensions for u in updates):
        raise ShapeError(op, "all updates must have the same dimensions", *avals)
    for i, (o, u) in enumerate(zip(operands, updates)):
        if o.element_type is not u.element_type:
            raise ShapeError(op, f"updates {i} has element type {u.element_type.short_name}, "
                                 f"its operand {o.element_type.short_name}", *avals)
    _check_indices(op, "scatter_indices", indices, avals)
    scatter_shape = indices.dimensions[:-1]
    _check_dim_list(op, "update_window_dims", dn.update_window_dims, upd.ndim, avals)
    _check_dim_list(op, "inserted_window_dims", dn.inserted_window_dims, first.ndim, avals)
    _check_batching(op, first, indices, dn.operand_batching_dims,
                    dn.scatter_indices_batching_dims,
                    ("operand_batching_dims", "scatter_indices_batching_dims"), avals)
    _check_disjoint(op, "inserted_window_dims", dn.inserted_window_dims,
                    "operand_batching_dims", dn.operand_batching_dims, avals)
    removed = len(dn.inserted_window_dims) + len(dn.operand_batching_dims)
    if len(dn.update_window_dims) + removed != first.ndim:
        raise ShapeError(op, f"update_window_dims {dn.update_window_dims} + "
                             f"inserted_window_dims {dn.inserted_window_dims} + "
                             f"operand_batching_dims {dn.operand_batching_dims} must count the "
                             f"operand rank {first.ndim}", *avals)
    if upd.ndim != len(dn.update_window_dims) + len(scatter_shape):
        raise ShapeError(op, f"updates must have rank {len(dn.update_window_dims)} "
                             f"(update_window_dims) + {len(scatter_shape)} (scatter_indices "
                             f"without the index vector dimension), got rank {upd.ndim}", *avals)
    _index_map_check(op, "scatter_dims_to_operand_dims", dn.scatter_dims_to_operand_dims,
                     indices, first, dn.operand_batching_dims, avals)
    window_bounds = [b for d, b in enumerate(first.dimensions)
                     if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    for k, d in enumerate(dn.update_window_dims):
        if upd.dimensions[d] > window_bounds[k]:
            raise ShapeError(op, f"updates window dimension {d} has size {upd.dimensions[d]}, "
                                 f"more than the operand's bound {window_bounds[k]}", *avals)
    scatter_dims = [d for d in range(upd.ndim) if d not in dn.update_window_dims]
    for d, want in zip(scatter_dims, scatter_shape):
        if upd.dimensions[d] != want:
            raise ShapeError(op, f"updates scatter dimension {d} has size {upd.dimensions[d]}, "
                                 f"scatter_indices give {want} (shape "
                                 f"{indices.dimensions} without the index vector dimension)",
                             *avals)


def _split_scatter_args(args: Sequence[Any], update_computation: Graph | None
                        ) -> tuple[list, Any, list, list]:
    """(operands, indices, updates, captured) from a scatter's flat arguments."""
    n = len(update_computation.out_avals) if update_computation is not None else \
        (len(args) - 1) // 2
    return list(args[:n]), args[n], list(args[n + 1:2 * n + 1]), list(args[2 * n + 1:])


def _scatter_rule(*args: AbstractValue, dimension_numbers: ScatterDimensionNumbers,
                  indices_are_sorted: bool, unique_indices: bool,
                  update_computation: Graph | None) -> list[AbstractValue]:
    operands, indices, updates, _captured = _split_scatter_args(args, update_computation)
    if not operands or len(updates) != len(operands):
        raise ShapeError("scatter", f"expected N >= 1 operands and N updates, got "
                                    f"{len(args)} arguments", *args)
    _scatter_check("scatter", operands, indices, updates, dimension_numbers)
    if update_computation is not None:
        want = [o.element_type for o in operands]
        got = update_computation.out_avals
        if [a.element_type for a in got] != want or any(a.ndim for a in got):
            raise ShapeError("scatter", f"update_computation must return {len(want)} scalar(s) "
                                        f"of type(s) {', '.join(t.short_name for t in want)}; it "
                                        f"returns {', '.join(str(a.shape) for a in got)}", *args)
    return [array_value(o.element_type, o.dimensions, o.weak_type) for o in operands]


def _named_scatter_rule(op: str, kinds: tuple[str, ...]):
    def rule(operand: AbstractValue, indices: AbstractValue, updates: AbstractValue, *,
             dimension_numbers: ScatterDimensionNumbers, indices_are_sorted: bool,
             unique_indices: bool) -> AbstractValue:
        _scatter_check(op, [operand], indices, [updates], dimension_numbers)
        check_kinds(op, operand, kinds)
        return array_value(operand.element_type, operand.dimensions, operand.weak_type)
    return rule


# --------------------------------------------------------------------------
# reference semantics
# --------------------------------------------------------------------------

def _index_vectors(indices: np.ndarray) -> np.ndarray:
    """The index vectors as int64 rows (huge unsigned values saturate, staying out of bounds)."""
    flat = indices.reshape(int(np.prod(indices.shape[:-1], dtype=np.int64)), indices.shape[-1])
    if flat.dtype == np.uint64:
        flat = np.minimum(flat, np.uint64(2 ** 62))
    # clamp so that start + size cannot overflow int64 (such windows are out of bounds anyway)
    return np.clip(flat.astype(np.int64), -2 ** 62, 2 ** 62)


def _full_starts(operand_shape: tuple[int, ...], indices: np.ndarray, index_map, operand_batching,
                 indices_batching) -> np.ndarray:
    """``Sin`` for every index vector: rows of full operand start indices, with
    the batch coordinates in the operand's batching dimensions."""
    vectors = _index_vectors(indices)
    starts = np.zeros((vectors.shape[0], len(operand_shape)), np.int64)
    starts[:, list(index_map)] = vectors
    if operand_batching:
        coords = np.indices(indices.shape[:-1]).reshape(indices.ndim - 1, -1)
        for od, idd in zip(operand_batching, indices_batching):
            starts[:, od] = coords[idd]
    return starts


def _window_positions(operand_shape: tuple[int, ...], starts: np.ndarray,
                      sizes: Sequence[int]) -> np.ndarray:
    """Flat operand positions of the windows of ``sizes`` at each row of ``starts``:
    an int64 array of shape ``(rows, *sizes)``."""
    strides = np.array([int(np.prod(operand_shape[d + 1:], dtype=np.int64))
                        for d in range(len(operand_shape))], np.int64)
    flat = (starts * strides).sum(axis=1).reshape((len(starts),) + (1,) * len(sizes))
    for d, size in enumerate(sizes):
        shape = [1] * (len(sizes) + 1)
        shape[d + 1] = size
        flat = flat + (np.arange(size) * strides[d]).reshape(shape)
    return flat


def _gather_impl(operand: np.ndarray, indices: np.ndarray, *,
                 dimension_numbers: GatherDimensionNumbers, slice_sizes, indices_are_sorted,
                 unique_indices) -> np.ndarray:
    dn = dimension_numbers
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    offset_sizes = [s for d, s in enumerate(slice_sizes) if d not in dropped]
    batch_shape, n_batch = indices.shape[:-1], indices.ndim - 1
    out_rank = n_batch + len(offset_sizes)
    if 0 in slice_sizes or 0 in batch_shape:  # nothing to read
        return np.zeros(_interleave(out_rank, dn.offset_dims, offset_sizes, batch_shape),
                        operand.dtype)
    starts = _full_starts(operand.shape, indices, dn.start_index_map, dn.operand_batching_dims,
                          dn.start_indices_batching_dims)
    # XLA clamps the start so the whole slice fits (batch coordinates are in range).
    starts = np.clip(starts, 0, np.array(operand.shape, np.int64) - np.array(slice_sizes, np.int64))
    slices = operand.reshape(-1)[_window_positions(operand.shape, starts, slice_sizes)]
    slices = slices.reshape(tuple(batch_shape) + tuple(offset_sizes))
    # Result dimension i is batch dimension b or offset dimension k of ``slices``.
    source = _interleave(out_rank, dn.offset_dims, range(n_batch, out_rank), range(n_batch))
    return np.transpose(slices, source)


def _scatter_targets(operand_shape: tuple[int, ...], indices: np.ndarray,
                     updates: Sequence[np.ndarray], dn: ScatterDimensionNumbers
                     ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Flat operand positions and the matching elements of each updates array
    (in the order index vector by index vector, each window row-major), for
    every window that fits in the operand; the others are skipped, as XLA does."""
    rank, shape = len(operand_shape), updates[0].shape
    no_window = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = iter(dn.update_window_dims)
    sizes = [1 if d in no_window else shape[next(window_dims)] for d in range(rank)]
    starts = _full_starts(operand_shape, indices, dn.scatter_dims_to_operand_dims,
                          dn.operand_batching_dims, dn.scatter_indices_batching_dims)
    fits = np.all((starts >= 0) & (starts + np.array(sizes, np.int64) <= operand_shape), axis=1)
    positions = _window_positions(operand_shape, starts[fits], sizes).reshape(-1)
    scatter_dims = [d for d in range(len(shape)) if d not in dn.update_window_dims]
    order = scatter_dims + list(dn.update_window_dims)
    values = [np.transpose(u, order).reshape((len(starts),) + tuple(sizes))[fits].reshape(-1)
              for u in updates]
    return positions, values


def _rounds(targets: np.ndarray) -> list[np.ndarray]:
    """Split update positions into rounds without repeated targets: round r
    holds the r-th update (in order) of every target."""
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    new_group = np.r_[True, ordered[1:] != ordered[:-1]] if len(ordered) else np.zeros(0, bool)
    group_start = np.maximum.accumulate(np.where(new_group, np.arange(len(ordered)), 0))
    rank = np.arange(len(ordered)) - group_start
    return [order[rank == r] for r in range(int(rank.max(initial=-1)) + 1)]


def _scatter_impl(*args: np.ndarray, dimension_numbers, indices_are_sorted, unique_indices,
                  update_computation):
    operands, indices, updates, captured = _split_scatter_args(args, update_computation)
    outs = [o.copy().reshape(-1) for o in operands]
    targets, values = _scatter_targets(operands[0].shape, indices, updates, dimension_numbers)
    if update_computation is None:  # replace: the last update of a target wins
        _, last_reversed = np.unique(targets[::-1], return_index=True)
        chosen = len(targets) - 1 - last_reversed
        for out, v in zip(outs, values):
            out[targets[chosen]] = v[chosen]
    else:
        for chosen in _rounds(targets):  # each round has distinct targets: one vector op
            t = targets[chosen]
            new = apply_computation(update_computation,
                                    [o[t] for o in outs] + [v[chosen] for v in values], captured)
            for out, n in zip(outs, new):
                out[t] = n
    return tuple(out.reshape(o.shape) for out, o in zip(outs, operands))


# name -> (admitted kinds, ufunc, ufunc for pred)
_NAMED_SCATTERS: dict[str, tuple[tuple[str, ...], np.ufunc, np.ufunc]] = {
    "scatter_add": (("pred", "signed", "unsigned", "float", "complex"), np.add, np.logical_or),
    "scatter_mul": (("pred", "signed", "unsigned", "float", "complex"), np.multiply,
                    np.logical_and),
    "scatter_min": (("pred", "signed", "unsigned", "float"), np.minimum, np.minimum),
    "scatter_max": (("pred", "signed", "unsigned", "float"), np.maximum, np.maximum),
}


def _named_scatter_impl(ufunc: np.ufunc, pred_ufunc: np.ufunc):
    def impl(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
             unique_indices, operand_types=None):
        out = operand.copy().reshape(-1)
        targets, (values,) = _scatter_targets(operand.shape, indices, [updates],
                                              dimension_numbers)
        t = operand_types[0] if operand_types else PT.from_dtype(operand.dtype)
        with np.errstate(all="ignore"):  # integers wrap, as in XLA
            if t is PT.BF16:  # computed in f32, rounded after every update
                for chosen in _rounds(targets):
                    at = targets[chosen]
                    out[at] = narrow(ufunc(widen(out[at], t), widen(values[chosen], t)), t)
            else:
                (pred_ufunc if t is PT.PRED else ufunc).at(out, targets, values)
        return out.reshape(operand.shape)
    return impl


# --------------------------------------------------------------------------
# primitives
# --------------------------------------------------------------------------

gather_p = Primitive("gather")
gather_p.def_abstract_eval(_gather_rule)
gather_p.def_impl(_gather_impl)

scatter_p = Primitive("scatter", multiple_results=True)
scatter_p.def_abstract_eval(_scatter_rule)
scatter_p.def_impl(_scatter_impl)

# Eager calls pass ``operand_types`` to the reference semantics (bf16 and u16
# share their NumPy storage); see ``elementwise.ElementwisePrimitive``.
NAMED_SCATTER_PRIMITIVES: dict[str, Primitive] = {}
for _name, (_kinds, _ufunc, _pred_ufunc) in _NAMED_SCATTERS.items():
    _p = ElementwisePrimitive(_name)
    _p.def_abstract_eval(_named_scatter_rule(_name, _kinds))
    _p.def_impl(_named_scatter_impl(_ufunc, _pred_ufunc))
    NAMED_SCATTER_PRIMITIVES[_name] = _p
scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p = (
    NAMED_SCATTER_PRIMITIVES[n] for n in _NAMED_SCATTERS)


# --------------------------------------------------------------------------
# user-facing functions
# --------------------------------------------------------------------------

def _dnums(cls, value: Any, op: str) -> tuple[Any, int | None]:
    """Dimension numbers from an instance or a mapping of its fields (which
    may also hold XLA's ``index_vector_dim``)."""
    if isinstance(value, cls):
        return value, None
    if isinstance(value, dict):
        fields = {k: v for k, v in value.items() if k != "index_vector_dim"}
        try:
            return cls(**fields), value.get("index_vector_dim")
        except TypeError as e:
            raise ShapeError(op, f"bad dimension_numbers {value!r}: {e}") from None
    raise ShapeError(op, f"dimension_numbers must be a {cls.__name__}, got {value!r}")


def _index_vector_last(op: str, indices: Any, index_vector_dim: int | None,
                       batching_dims: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """Move XLA's ``index_vector_dim`` of ``indices`` last (JAX's convention),
    renumbering the indices' batching dimensions to match."""
    from .shape_ops import reshape, transpose
    aval = abstractify(indices)
    rank = aval.ndim
    if index_vector_dim is None or index_vector_dim == rank - 1:
        return indices, batching_dims
    if not 0 <= index_vector_dim <= rank:
        raise ShapeError(op, f"index_vector_dim {index_vector_dim} is out of range [0, {rank}]",
                         aval)
    if index_vector_dim in batching_dims:
        raise ShapeError(op, f"index_vector_dim {index_vector_dim} is also an indices batching "
                             f"dimension {batching_dims}", aval)
    if index_vector_dim == rank:  # an implicit trailing dimension of size 1
        return reshape(indices, aval.dimensions + (1,)), batching_dims
    perm = [d for d in range(rank) if d != index_vector_dim] + [index_vector_dim]
    return (transpose(indices, perm),
            tuple(d - (d > index_vector_dim) for d in batching_dims))


def _bounds_vector(indices: Any, bounds: Sequence[int]) -> Any:
    """The per-component upper bounds, broadcast along the index vectors, in
    the indices' element type (saturated to its range)."""
    from .shape_ops import broadcast_in_dim
    aval = abstractify(indices)
    info = np.iinfo(aval.dtype)
    ub = np.clip(np.asarray(bounds, np.int64), 0, min(int(info.max), 2 ** 62)).astype(aval.dtype)
    return broadcast_in_dim(ub, aval.dimensions, (aval.ndim - 1,))


def _default_fill(t: PT) -> Any:
    if t.is_floating or t.is_complex:
        return np.nan
    if t is PT.PRED:
        return True
    return np.iinfo(t.numpy_dtype).min if t.is_signed else np.iinfo(t.numpy_dtype).max


def _fill_out_of_bounds(out: Any, operand: AbstractValue, indices: Any,
                        dn: GatherDimensionNumbers, slice_sizes: tuple[int, ...],
                        fill_value: Any) -> Any:
    """``mode="fill"``: slices whose start is out of bounds read ``fill_value``."""
    from . import elementwise as ew
    from .reductions import reduce_sum
    from .shape_ops import broadcast_in_dim
    idx = abstractify(indices)
    if idx.dimensions[-1] == 0:
        return out
    bad = ew.gt(indices, _bounds_vector(indices, [operand.dimensions[d] - slice_sizes[d]
                                                  for d in dn.start_index_map]))
    if idx.element_type.is_signed:
        bad = ew.max(bad, ew.lt(indices, 0))  # max of preds is "or"
    bad = reduce_sum(bad, (idx.ndim - 1,))  # sum of preds is "any"
    out_aval = abstractify(out)
    batch_positions = [i for i in range(out_aval.ndim) if i not in dn.offset_dims]
    bad = broadcast_in_dim(bad, out_aval.dimensions, batch_positions)
    t = out_aval.element_type
    fill = ew.convert_element_type(
        np.asarray(_default_fill(t) if fill_value is None else fill_value), t)
    return ew.select(bad, broadcast_in_dim(fill, out_aval.dimensions, ()), out)


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, indices_are_sorted: bool = False,
           unique_indices: bool = False, mode: Any = None, fill_value: Any = None,
           index_vector_dim: int | None = None) -> Any:
    """XLA's Gather (see the module docstring); ``jax.lax.gather``'s signature.

    ``mode``: ``None``/``"clip"``/``"promise_in_bounds"`` clamp start indices
    as XLA does; ``"fill"`` gives ``fill_value`` (default NaN, the most
    negative or the largest integer, True) for slices that would not fit.
    ``index_vector_dim``: XLA's, when it is not the last dimension of
    ``start_indices``."""
    dn, ivd = _dnums(GatherDimensionNumbers, dimension_numbers, "gather")
    ivd = index_vector_dim if index_vector_dim is not None else ivd
    mode = GatherScatterMode.from_any(mode)
    sizes = as_int_tuple("gather", "slice_sizes", slice_sizes)
    indices, batching = _index_vector_last("gather", start_indices, ivd,
                                           dn.start_indices_batching_dims)
    dn = GatherDimensionNumbers(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                                dn.operand_batching_dims, batching)
    out = gather_p.bind(operand, indices, dimension_numbers=dn, slice_sizes=sizes,
                        indices_are_sorted=bool(indices_are_sorted),
                        unique_indices=bool(unique_indices))
    if mode is GatherScatterMode.FILL_OR_DROP:
        out = _fill_out_of_bounds(out, abstractify(operand), indices, dn, sizes, fill_value)
    return out


def _clip_scatter_indices(indices: Any, operand: AbstractValue, updates: AbstractValue,
                          dn: ScatterDimensionNumbers) -> Any:
    """``mode="clip"``: clamp the indices so that every update window fits."""
    from . import elementwise as ew
    no_window = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window_dims = iter(dn.update_window_dims)
    sizes = [1 if d in no_window else updates.dimensions[next(window_dims)]
             for d in range(operand.ndim)]
    bounds = [operand.dimensions[d] - sizes[d] for d in dn.scatter_dims_to_operand_dims]
    return ew.min(ew.max(indices, 0), _bounds_vector(indices, bounds))


_NAMED_COMPUTATIONS = {"add": "scatter_add", "mul": "scatter_mul", "min": "scatter_min",
                       "max": "scatter_max"}


def _as_named_scatter(graph: Graph, operand: AbstractValue) -> Primitive | None:
    """The named scatter primitive when ``graph`` is just ``add/mul/min/max(old, new)``."""
    prim = single_binary_op(graph)
    name = _NAMED_COMPUTATIONS.get(prim.name) if prim is not None else None
    if name is None:
        return None
    t = operand.element_type
    kind = ("pred" if t is PT.PRED else "complex" if t.is_complex else "float" if t.is_floating
            else "signed" if t.is_signed else "unsigned")
    return NAMED_SCATTER_PRIMITIVES[name] if kind in _NAMED_SCATTERS[name][0] else None


def _prepare_scatter(op: str, operand: Any, scatter_indices: Any, updates: Any,
                     dimension_numbers: Any, mode: Any, index_vector_dim: int | None
                     ) -> tuple[Any, ScatterDimensionNumbers]:
    dn, ivd = _dnums(ScatterDimensionNumbers, dimension_numbers, op)
    ivd = index_vector_dim if index_vector_dim is not None else ivd
    indices, batching = _index_vector_last(op, scatter_indices, ivd,
                                           dn.scatter_indices_batching_dims)
    dn = ScatterDimensionNumbers(dn.update_window_dims, dn.inserted_window_dims,
                                 dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                                 batching)
    if GatherScatterMode.from_any(mode) is GatherScatterMode.CLIP:
        indices = _clip_scatter_indices(indices, abstractify(operand), abstractify(updates), dn)
    return indices, dn


def scatter(operand: Any, scatter_indices: Any, updates: Any,
            dimension_numbers: ScatterDimensionNumbers, *,
            update_computation: Callable[..., Any] | None = None,
            indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None,
            index_vector_dim: int | None = None) -> Any:
    """XLA's Scatter.  ``update_computation(old, new)`` combines the current
    value with an update (``None`` replaces).  Variadic: ``operand`` and
    ``updates`` may be sequences of N arrays; the computation then takes
    ``(old_0..old_N-1, new_0..new_N-1)``, returns N values, and ``scatter``
    returns a tuple.  Update windows that do not fit are skipped (XLA);
    ``mode="clip"`` clamps the indices first."""
    variadic = isinstance(operand, (tuple, list))
    operands = list(operand) if variadic else [operand]
    upds = list(updates) if isinstance(updates, (tuple, list)) else [updates]
    indices, dn = _prepare_scatter("scatter", operands[0], scatter_indices, upds[0],
                                   dimension_numbers, mode, index_vector_dim)
    flags = dict(dimension_numbers=dn, indices_are_sorted=bool(indices_are_sorted),
                 unique_indices=bool(unique_indices))
    graph, captured = None, ()
    if update_computation is not None:
        avals = scalar_avals([abstractify(o) for o in operands])
        comp = trace_computation(update_computation, avals + avals, name="scatter_update",
                                 op="scatter")
        named = None if variadic or comp.captured else \
            _as_named_scatter(comp.graph, abstractify(operands[0]))
        if named is not None:
            return named.bind(operands[0], indices, upds[0], **flags)
        graph, captured = comp.graph, comp.captured
    outs = scatter_p.bind(*operands, indices, *upds, *captured, update_computation=graph,
                          **flags)
    return tuple(outs) if variadic else outs[0]


def _named_scatter(prim: Primitive):
    def fn(operand: Any, scatter_indices: Any, updates: Any,
           dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
           unique_indices: bool = False, mode: Any = None,
           index_vector_dim: int | None = None) -> Any:
        indices, dn = _prepare_scatter(prim.name, operand, scatter_indices, updates,
                                       dimension_numbers, mode, index_vector_dim)
        return prim.bind(operand, indices, updates, dimension_numbers=dn,
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices))
    fn.__name__ = fn.__qualname__ = prim.name
    fn.__doc__ = (f"XLA's Scatter with a ``{prim.name.removeprefix('scatter_')}`` update "
                  f"computation (``jax.lax.{prim.name}``); see ``scatter``.")
    return fn


scatter_add, scatter_mul, scatter_min, scatter_max = (
    _named_scatter(p) for p in (scatter_add_p, scatter_mul_p, scatter_min_p, scatter_max_p))
