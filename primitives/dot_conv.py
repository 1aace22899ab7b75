"""Dot and DotGeneral.

``dot_general(lhs, rhs, dimension_numbers)`` with
``dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch,
rhs_batch))``: the result's dimensions are the batch dimensions, then the
lhs free dimensions, then the rhs free dimensions (XLA's and ``jax.lax``'s
order).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tracer.core import AbstractValue, Primitive, ShapeError, abstractify, array_value

from ._util import as_int_tuple, check_kinds
from .dtypes import canonical_type
from .elementwise import convert_element_type, promote

__all__ = ["dot_general", "dot", "DotDimensionNumbers"]

DotDimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                            tuple[tuple[int, ...], tuple[int, ...]]]

dot_general_p = Primitive("dot_general")


def _free_dims(rank: int, *used: Sequence[int]) -> tuple[int, ...]:
    taken = {d for group in used for d in group}
    return tuple(d for d in range(rank) if d not in taken)


@dot_general_p.def_abstract_eval
def _dot_general_rule(lhs: AbstractValue, rhs: AbstractValue, *,
                      dimension_numbers: DotDimensionNumbers, precision=None,
                      preferred_element_type=None) -> AbstractValue:
    op = "dot_general"
    (lc, rc), (lb, rb) = dimension_numbers
    for name, dims, aval in (("lhs_contracting_dimensions", lc, lhs),
                             ("rhs_contracting_dimensions", rc, rhs),
                             ("lhs_batch_dimensions", lb, lhs),
                             ("rhs_batch_dimensions", rb, rhs)):
        for d in dims:
            if not 0 <= d < aval.ndim:
                raise ShapeError(op, f"{name} {dims}: {d} is out of range for rank {aval.ndim}",
                                 lhs, rhs)
    for side, c, b, aval in (("lhs", lc, lb, lhs), ("rhs", rc, rb, rhs)):
        if len(set(c) | set(b)) != len(c) + len(b):
            raise ShapeError(op, f"{side} contracting {c} and batch {b} dimensions must be "
                                 f"distinct", lhs, rhs)
    if len(lc) != len(rc):
        raise ShapeError(op, f"lhs_contracting_dimensions {lc} and rhs_contracting_dimensions "
                             f"{rc} must have the same length", lhs, rhs)
    if len(lb) != len(rb):
        raise ShapeError(op, f"lhs_batch_dimensions {lb} and rhs_batch_dimensions {rb} must "
                             f"have the same length", lhs, rhs)
    for a, b in zip(lc, rc):
        if lhs.dimensions[a] != rhs.dimensions[b]:
            raise ShapeError(op, f"contracting dimension sizes differ: lhs dimension {a} is "
                                 f"{lhs.dimensions[a]}, rhs dimension {b} is {rhs.dimensions[b]}",
                             lhs, rhs)
    for a, b in zip(lb, rb):
        if lhs.dimensions[a] != rhs.dimensions[b]:
            raise ShapeError(op, f"batch dimension sizes differ: lhs dimension {a} is "
                                 f"{lhs.dimensions[a]}, rhs dimension {b} is {rhs.dimensions[b]}",
                             lhs, rhs)
    if lhs.element_type is not rhs.element_type:
        raise ShapeError(op, "operand element types must be equal", lhs, rhs)
    check_kinds(op, lhs, ("pred", "signed", "unsigned", "float", "complex"))
    dims = (tuple(lhs.dimensions[d] for d in lb)
            + tuple(lhs.dimensions[d] for d in _free_dims(lhs.ndim, lc, lb))
            + tuple(rhs.dimensions[d] for d in _free_dims(rhs.ndim, rc, rb)))
    out_type = preferred_element_type or lhs.element_type
    return array_value(out_type, dims)


@dot_general_p.def_impl
def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision=None,
                      preferred_element_type=None):
    (lc, rc), (lb, rb) = dimension_numbers
    out_dtype = (preferred_element_type.numpy_dtype if preferred_element_type
                 else lhs.dtype)
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    lhs_idx = [None] * lhs.ndim
    rhs_idx = [None] * rhs.ndim
    batch = []
    for a, b in zip(lb, rb):
        ch = next(letters)
        lhs_idx[a] = rhs_idx[b] = ch
        batch.append(ch)
    for a, b in zip(lc, rc):
        ch = next(letters)
        lhs_idx[a] = rhs_idx[b] = ch
    free: list[str] = []
    for idx in (lhs_idx, rhs_idx):
        for i, ch in enumerate(idx):
            if ch is None:
                idx[i] = next(letters)
                free.append(idx[i])
    spec = f"{''.join(lhs_idx)},{''.join(rhs_idx)}->{''.join(batch + free)}"
    acc = np.result_type(out_dtype, lhs.dtype)
    if acc == np.bool_:
        return np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64)) != 0
    with np.errstate(all="ignore"):
        return np.einsum(spec, lhs.astype(acc), rhs.astype(acc)).astype(out_dtype)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """XLA's DotGeneral (``jax.lax.dot_general`` signature)."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((as_int_tuple("dot_general", "lhs_contracting_dimensions", lc),
           as_int_tuple("dot_general", "rhs_contracting_dimensions", rc)),
          (as_int_tuple("dot_general", "lhs_batch_dimensions", lb),
           as_int_tuple("dot_general", "rhs_batch_dimensions", rb)))
    lhs, rhs = promote(lhs, rhs)
    pet = canonical_type(preferred_element_type) if preferred_element_type is not None else None
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                              preferred_element_type=pet)


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """XLA's Dot: vector·vector, matrix·vector, vector·matrix or matrix·matrix,
    contracting the last dimension of ``lhs`` with the first of ``rhs``."""
    la, ra = abstractify(lhs), abstractify(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise ShapeError("dot", f"operands must have rank 1 or 2, got ranks {la.ndim} and "
                                f"{ra.ndim}", la, ra)
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)
