"""Sort (multi-operand, comparator, stability) and TopK.

``sort(operand, dimension=-1, is_stable=True, num_keys=1, comparator=None)``
sorts one array, or several arrays of equal dimensions together (a sequence
in, a tuple out), along ``dimension``.  ``comparator(lhs_0, rhs_0, lhs_1,
rhs_1, ...)`` receives scalars in XLA's order and returns true when the lhs
elements go before the rhs ones; it is traced into a sub-graph (the
``comparator`` parameter).  Without one, the order is XLA's total order on
the first ``num_keys`` operands, compared lexicographically (-inf < ... <
-0 < +0 < ... < +inf; complex numbers by real then imaginary part), with
every NaN last whatever its sign (as JAX and NumPy sort); the graph then
has no comparator (``comparator=None``, as JAX's ``sort``).

The reference semantics are stable whatever ``is_stable`` says (a stable
order is one of the orders an unstable sort may give).  A comparator runs
as a sorting network (Batcher's odd-even merge sort) whose every stage is one
evaluation of the comparator on whole arrays, with the original position
breaking ties.

``top_k(operand, k)`` returns the ``k`` largest elements along the last
dimension, largest first, and their ``s32`` indices; equal elements come
lower index first (the document's rule); the order is XLA's total order
(+NaN is the largest, -NaN the smallest), as XLA:CPU's TopK.
``largest=False`` (XLA's TopK parameter) gives the smallest instead.
"""
from __future__ import annotations

import functools
from typing import Any, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue, ShapeError, abstractify, array_value
from numxla.tracer.graph import Graph
from numxla.tracer.shapes import PrimitiveType as PT

from ._subgraph import scalar_avals, trace_computation
from ._util import check_kinds
from numxla.tracer.core import TypedPrimitive
from .reductions import (ORDERED, apply_computation, check_computation,
                         computation_name, type_of, widen)

__all__ = ["sort", "sort_key_val", "top_k"]


def _sort_keys(x: np.ndarray, nan_last: bool = True) -> list[np.ndarray]:
    """Integer keys whose order is XLA's total order of ``x`` (with every NaN
    last and equal if ``nan_last``, else -NaN first and +NaN last)."""
    if x.dtype.kind == "c":
        return _sort_keys(x.real, nan_last) + _sort_keys(x.imag, nan_last)
    if x.dtype == np.bool_:
        return [x.astype(np.uint8)]
    if x.dtype.kind != "f":
        return [x]
    signed = np.dtype(f"i{x.dtype.itemsize}")
    bits = x.view(signed)
    largest = signed.type(np.iinfo(signed).max)
    key = np.where(bits < 0, bits ^ largest, bits)  # negatives: flip the magnitude bits
    return [np.where(np.isnan(x), largest, key) if nan_last else key]


# --------------------------------------------------------------------------
# the comparator as a sorting network
# --------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _network(n: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The stages of Batcher's odd-even merge sort for ``n`` elements: pairs
    (i, j), i < j, disjoint within a stage, after which ``x[i] <= x[j]``.
    Built for the next power of two; pairs reaching past ``n`` are dropped
    (the missing elements act as +infinity and would never move)."""
    size = 1 << max(0, (n - 1).bit_length())
    stages = []
    p = 1
    while p < size:
        k = p
        while k >= 1:
            pairs = [(i + j, i + j + k)
                     for j in range(k % p, size - k, 2 * k)
                     for i in range(min(k, size - j - k))
                     if (i + j) // (2 * p) == (i + j + k) // (2 * p) and i + j + k < n]
            if pairs:
                lo, hi = np.array(pairs, np.int64).T
                stages.append((lo, hi))
            k //= 2
        p *= 2
    return tuple(stages)


def _sort_with_comparator(operands: list[np.ndarray], comparator: Graph,
                          extra: Sequence[Any]) -> list[np.ndarray]:
    """Sort along the last axis with ``comparator``, stably."""
    n = operands[0].shape[-1]
    position = np.broadcast_to(np.arange(n), operands[0].shape).copy()
    xs = [x.copy() for x in operands]

    def before(a: list[np.ndarray], b: list[np.ndarray]) -> np.ndarray:
        args = [v for pair in zip(a, b) for v in pair]
        return apply_computation(comparator, args, extra)[0].astype(bool)

    for lo, hi in _network(n):
        a = [x[..., lo] for x in xs]
        b = [x[..., hi] for x in xs]
        pa, pb = position[..., lo], position[..., hi]
        swap = before(b, a) | (~before(a, b) & (pb < pa))
        for x, va, vb in zip(xs + [position], a + [pa], b + [pb]):
            x[..., lo] = np.where(swap, vb, va)
            x[..., hi] = np.where(swap, va, vb)
    return xs


# --------------------------------------------------------------------------
# Sort
# --------------------------------------------------------------------------

sort_p = TypedPrimitive("sort", multiple_results=True)


def _split_sort_args(args: Sequence[Any], comparator: Graph | None) -> tuple[list, list]:
    if comparator is None:
        return list(args), []
    n = len(comparator.in_avals) - len(args)  # the graph takes 2N + C, the op N + C
    return list(args[:n]), list(args[n:])


@sort_p.def_abstract_eval
def _sort_rule(*avals: AbstractValue, dimension: int, is_stable: bool, num_keys: int,
               comparator: Graph | None) -> list[AbstractValue]:
    if comparator is not None and not isinstance(comparator, Graph):
        raise ShapeError("sort", f"comparator must be a traced computation or None, "
                                 f"got {comparator!r}")
    operands, extra = _split_sort_args(avals, comparator)
    if not operands:
        raise ShapeError("sort", "needs at least one operand", *avals)
    first = operands[0]
    for i, x in enumerate(operands):
        if x.dimensions != first.dimensions:
            raise ShapeError("sort", f"operands must have equal dimensions; operand {i} "
                                     f"differs", *operands)
    if not 0 <= dimension < first.ndim:
        raise ShapeError("sort", f"dimension {dimension} is out of range for rank "
                                 f"{first.ndim}", *operands)
    if not 1 <= num_keys <= len(operands):
        raise ShapeError("sort", f"num_keys {num_keys} must be between 1 and the number of "
                                 f"operands ({len(operands)})", *operands)
    if comparator is None:
        for x in operands[:num_keys]:
            check_kinds("sort", x, ORDERED + ("complex",), what="key operand")
    else:
        types = [x.element_type for x in operands for _ in range(2)]
        check_computation("sort", "comparator", comparator, types, [PT.PRED], extra)
    return [array_value(x.element_type, x.dimensions, x.weak_type) for x in operands]


@sort_p.def_impl
def _sort_impl(*args: np.ndarray, dimension: int, is_stable: bool, num_keys: int,
               comparator: Graph | None, operand_types: Sequence[PT] | None = None):
    operands, extra = _split_sort_args(args, comparator)
    moved = [np.moveaxis(x, dimension, -1) for x in operands]
    if comparator is None:
        keys = [k for i, x in enumerate(moved[:num_keys])
                for k in _sort_keys(widen(x, type_of(x, operand_types, i)))]
        order = np.lexsort(keys[::-1], axis=-1) if keys[0].shape[-1] else \
            np.zeros(keys[0].shape, np.int64)
        out = [np.take_along_axis(x, order, axis=-1) for x in moved]
    else:
        out = _sort_with_comparator(moved, comparator, extra)[:len(operands)]
    return tuple(np.moveaxis(x, -1, dimension) for x in out)


def sort(operand: Any, dimension: int = -1, is_stable: bool = True, num_keys: int = 1,
         comparator: Any = None) -> Any:
    """XLA's Sort (see the module docstring).  ``operand`` is an array or a
    sequence of arrays; the result is an array or a tuple of arrays."""
    single = not isinstance(operand, (list, tuple))
    operands = [operand] if single else list(operand)
    if not operands:
        raise ShapeError("sort", "needs at least one operand")
    avals = [abstractify(x) for x in operands]
    rank = avals[0].ndim
    if not -rank <= dimension < rank:
        raise ShapeError("sort", f"dimension {dimension} is out of range for rank {rank}",
                         *avals)
    captured: tuple[Any, ...] = ()
    graph = None
    if comparator is not None:
        in_avals = [s for a in scalar_avals(avals) for s in (a, a)]
        comp = trace_computation(comparator, in_avals, name=computation_name(comparator))
        graph, captured = comp.graph, comp.captured
    outs = sort_p.bind(*operands, *captured, dimension=dimension % rank if rank else dimension,
                       is_stable=bool(is_stable), num_keys=int(num_keys), comparator=graph)
    return outs[0] if single else tuple(outs)


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True
                 ) -> tuple[Any, Any]:
    """Sort ``keys`` along ``dimension`` and ``values`` with them."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


# --------------------------------------------------------------------------
# TopK
# --------------------------------------------------------------------------

top_k_p = TypedPrimitive("top_k", multiple_results=True)


@top_k_p.def_abstract_eval
def _top_k_rule(x: AbstractValue, *, k: int, largest: bool) -> list[AbstractValue]:
    check_kinds("top_k", x, ORDERED)
    if x.ndim < 1:
        raise ShapeError("top_k", "operand must have rank >= 1", x)
    if not 0 <= k <= x.dimensions[-1]:
        raise ShapeError("top_k", f"k {k} must be between 0 and the size of the last "
                                  f"dimension ({x.dimensions[-1]})", x)
    dims = x.dimensions[:-1] + (k,)
    return [array_value(x.element_type, dims, x.weak_type), array_value(PT.S32, dims)]


@top_k_p.def_impl
def _top_k_impl(x: np.ndarray, *, k: int, largest: bool,
                operand_types: Sequence[PT] | None = None):
    (key,) = _sort_keys(widen(x, type_of(x, operand_types)), nan_last=False)
    # ~ reverses the order of signed and unsigned integers alike, without overflow
    order = np.argsort(~key if largest else key, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, axis=-1), order.astype(np.int32)


def top_k(operand: Any, k: int, largest: bool = True) -> tuple[Any, Any]:
    """The ``k`` largest (``largest=False``: smallest) elements along the last
    dimension and their indices, ties lower index first."""
    return tuple(top_k_p.bind(operand, k=int(k), largest=bool(largest)))
