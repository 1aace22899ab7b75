"""Reductions.  ``reduce_sum`` is XLA's Reduce with an ``add`` computation,
kept as its own primitive (as JAX does) because it is by far the most
common reduction and its derivative and kernel are simple."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tracer.core import AbstractValue, Primitive, ShapeError, abstractify, array_value

from ._util import as_int_tuple, canonical_dims, check_kinds

__all__ = ["reduce_sum"]

reduce_sum_p = Primitive("reduce_sum")


@reduce_sum_p.def_abstract_eval
def _reduce_sum_rule(x: AbstractValue, *, axes: tuple[int, ...]) -> AbstractValue:
    check_kinds("reduce_sum", x, ("pred", "signed", "unsigned", "float", "complex"))
    if len(set(axes)) != len(axes):
        raise ShapeError("reduce_sum", f"dimensions {axes} contain a repeated dimension", x)
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ShapeError("reduce_sum", f"dimension {a} is out of range for rank {x.ndim}", x)
    kept = tuple(d for i, d in enumerate(x.dimensions) if i not in axes)
    return array_value(x.element_type, kept, x.weak_type)


@reduce_sum_p.def_impl
def _reduce_sum_impl(x: np.ndarray, *, axes):
    if x.dtype == np.bool_:
        return np.any(x, axis=axes)
    with np.errstate(all="ignore"):
        return np.sum(x, axis=axes, dtype=x.dtype)


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    """Sum over ``axes`` (negative numbers count from the end)."""
    aval = abstractify(operand)
    axes = canonical_dims("reduce_sum", "dimension", as_int_tuple("reduce_sum", "axes", axes),
                          aval.ndim, aval)
    return reduce_sum_p.bind(operand, axes=tuple(sorted(axes)))
