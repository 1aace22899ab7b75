"""Shape and data-movement operations: BroadcastInDim, Reshape, Transpose."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tracer.core import AbstractValue, Primitive, ShapeError, abstractify, array_value

from ._util import as_int_tuple

__all__ = ["broadcast_in_dim", "reshape", "transpose"]


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
    (as in ``jax.lax.reshape``) transposes the operand first; one ``-1`` in
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
