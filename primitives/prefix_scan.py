"""Parallel prefix scans built from XLA ops: ``associative_scan`` and the
cumulative reductions XLA has no window form for (``cumlogsumexp``).

``associative_scan(fn, elems)`` computes ``fn(...fn(fn(e_0, e_1), e_2)..., e_i)``
for every ``i`` in ``O(log n)`` rounds of strided slices, one ``fn`` per
round on half the elements, and interleaves the results back (the classic
odd/even recursion, which is also how ``jax.lax.associative_scan`` works):

* combine neighbours: ``r_j = fn(e_{2j}, e_{2j+1})``;
* scan ``r`` recursively: the results at the odd positions;
* the even positions ``2j`` (``j > 0``) are ``fn(odd_{j-1}, e_{2j})``; position 0 is ``e_0``;
* even and odd results side by side in a new dimension, reshaped into one.

It is also the derivative of the cumulative windows: a ``reduce_window``
whose windows are the prefixes of an axis is differentiated as the scan of
its computation (autodiff/windows.py), so ``cummax``/``cumprod`` gradients
cost ``O(n log n)`` rather than a select-and-scatter over ``n`` windows of
``n`` elements, and split ties as JAX's do.
"""
from __future__ import annotations

from typing import Any, Callable

from numxla.tracer import pytree
from numxla.tracer.core import ShapeError, abstractify

from . import elementwise as ew
from . import shape_ops as so

__all__ = ["associative_scan", "cumlogsumexp"]


def _slice(x: Any, axis: int, start: int, stop: int | None, stride: int = 1) -> Any:
    n = abstractify(x).dimensions[axis]
    stop = n if stop is None else (stop if stop >= 0 else n + stop)
    return so.slice_in_dim(x, start, max(start, stop), stride, axis)


def _interleave(even: Any, odd: Any, axis: int) -> Any:
    """``even[0], odd[0], even[1], odd[1]...`` along ``axis`` (``even`` may
    be one longer): the pairs side by side in a new dimension after
    ``axis``, reshaped into one; values (signed zeros, NaNs) pass unchanged."""
    aval = abstractify(even)
    n_odd = abstractify(odd).dimensions[axis]
    head = _slice(even, axis, 0, n_odd)
    dims = aval.dimensions[:axis] + (n_odd, 1) + aval.dimensions[axis + 1:]
    pairs = so.concatenate([so.reshape(head, dims), so.reshape(odd, dims)], axis + 1)
    merged = so.reshape(pairs, aval.dimensions[:axis] + (2 * n_odd,) + aval.dimensions[axis + 1:])
    if aval.dimensions[axis] == n_odd:
        return merged
    return so.concatenate([merged, _slice(even, axis, n_odd, None)], axis)


def _scan(fn: Callable[[list, list], list], elems: list, axis: int) -> list:
    n = abstractify(elems[0]).dimensions[axis]
    if n < 2:
        return elems
    pairs = fn([_slice(e, axis, 0, -1, 2) for e in elems],
               [_slice(e, axis, 1, None, 2) for e in elems])
    odd = _scan(fn, pairs, axis)
    firsts = [_slice(e, axis, 0, 1) for e in elems]
    if n == 2:  # no even position after the first
        return [so.concatenate([f, o], axis) for f, o in zip(firsts, odd)]
    if n % 2 == 0:  # the last odd result has no even element after it
        rest = fn([_slice(o, axis, 0, -1) for o in odd],
                  [_slice(e, axis, 2, None, 2) for e in elems])
    else:
        rest = fn(odd, [_slice(e, axis, 2, None, 2) for e in elems])
    even = [so.concatenate([f, r], axis) for f, r in zip(firsts, rest)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]


def associative_scan(fn: Callable[[Any, Any], Any], elems: Any, reverse: bool = False,
                     axis: int = 0) -> Any:
    """All prefix combinations of ``elems`` (a pytree of arrays with equal
    extents along ``axis``) under the associative ``fn``, in ``O(log n)``
    rounds (``jax.lax.associative_scan``); ``reverse`` scans from the end."""
    leaves, tree = pytree.flatten(elems)
    if not leaves:
        raise ShapeError("associative_scan", "elems has no arrays")
    avals = [abstractify(x) for x in leaves]
    rank = avals[0].ndim
    if not -rank <= axis < rank:
        raise ShapeError("associative_scan", f"axis {axis} is out of range for rank {rank}",
                         avals[0])
    axis %= rank
    sizes = {a.dimensions[axis] for a in avals}
    if len(sizes) != 1:
        raise ShapeError("associative_scan", f"the arrays have different extents {sorted(sizes)} "
                                             f"along axis {axis}", *avals)
    if reverse:
        leaves = [so.rev(x, (axis,)) for x in leaves]

    def combine(a: list, b: list) -> list:
        out, out_tree = pytree.flatten(fn(pytree.unflatten(tree, a), pytree.unflatten(tree, b)))
        if out_tree != tree:
            raise ShapeError("associative_scan", f"fn must return the structure of elems "
                                                 f"({tree}), not {out_tree}")
        return out

    scanned = _scan(combine, leaves, axis)
    if reverse:
        scanned = [so.rev(x, (axis,)) for x in scanned]
    return pytree.unflatten(tree, scanned)


def logaddexp(a: Any, b: Any) -> Any:
    """``log(exp(a) + exp(b))`` without overflow; exact for infinite inputs."""
    big = ew.max(a, b)
    gap = ew.sub(a, b)
    finite = ew.add(big, ew.log1p(ew.exp(ew.neg(ew.abs(gap)))))
    return ew.select(ew.is_finite(gap), finite, big)


def cumlogsumexp(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
    """``log(cumsum(exp(operand)))`` along ``axis``, computed stably
    (``jax.lax.cumlogsumexp``)."""
    return associative_scan(logaddexp, operand, reverse=reverse, axis=axis)
