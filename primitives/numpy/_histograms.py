"""NumPy-style layer: searching sorted arrays and binning.

``searchsorted`` is a binary search, a ``fori_loop`` of ``ceil(log2(n + 1))``
steps (NaNs sort last, as in NumPy); ``digitize`` is two of them, chosen by the
bins' direction; the histograms bin with ``searchsorted`` and count with a
scatter-add (values outside the range are dropped; the last bin includes
its right edge).  Counts are floats, as ``jax.numpy``'s.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from ..control_flow import fori_loop
from ..dtypes import canonical_type
from ._core import _broadcast_all, _to_inexact, _arraylike, broadcast_to, reshape, sum as _sum, \
    true_divide, where
from ._gather_indexing import take
from ._indexing import linspace, ravel, stack
from ._math import isnan
from ._reductions import max as _max, min as _min
from .._util import dims as _dims, element_type as _type

__all__ = ["searchsorted", "digitize", "histogram_bin_edges", "histogram", "histogram2d",
           "histogramdd"]




def _less(x: Any, y: Any) -> Any:
    """``x < y`` in NumPy's sort order (NaN after everything)."""
    lt = ew.lt(x, y)
    if not (_type(x).is_floating or _type(x).is_complex):
        return lt
    return ew.bitwise_or(lt, ew.bitwise_and(isnan(y), ew.not_(isnan(x))))


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Where ``v``'s elements would go in the sorted 1-D ``a`` to keep it sorted
    (the first such place if ``side`` is "left", the last if "right"); s32."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    a = _arraylike(a)
    if abstractify(a).ndim != 1:
        raise ValueError("searchsorted: a must be one-dimensional")
    if sorter is not None:
        a = take(a, _arraylike(sorter))
    a, v = ew.promote(a, _arraylike(v))
    n = _dims(a)[0]

    def halve(_, bounds):
        lo, hi = bounds
        mid = ew.div(ew.add(lo, hi), np.int32(2))
        am = take(a, mid, mode="clip")
        right = _less(am, v) if side == "left" else ew.not_(_less(v, am))
        active = ew.lt(lo, hi)
        lo = where(ew.bitwise_and(active, right), ew.add(mid, np.int32(1)), lo)
        return lo, where(ew.bitwise_and(active, ew.not_(right)), mid, hi)

    # a loop, not unrolled: unrolled, the bounds' reuse grows the fused expressions
    steps = math.ceil(math.log2(n + 1)) if n else 0
    bounds = (broadcast_to(np.int32(0), _dims(v)), broadcast_to(np.int32(n), _dims(v)))
    return fori_loop(0, steps, halve, bounds)[0]


def digitize(x: Any, bins: Any, right: bool = False, *, method: str | None = None) -> Any:
    """The index of the bin of each ``x`` for monotonic ``bins`` (increasing or
    decreasing; ``right``: bins include their right edge); s32."""
    bins = _arraylike(bins)
    if abstractify(bins).ndim != 1:
        raise ValueError("digitize: bins must be a one-dimensional array")
    n = _dims(bins)[0]
    side = "left" if right else "right"
    if n == 0:
        return broadcast_to(np.int32(0), _dims(_arraylike(x)))
    increasing = searchsorted(bins, x, side)
    decreasing = ew.sub(np.int32(n), searchsorted(lax.rev(bins, (0,)), x, side))
    rising = ew.ge(lax.slice(bins, (n - 1,), (n,)), lax.slice(bins, (0,), (1,)))
    return where(reshape(rising, ()), increasing, decreasing)


def _range(a: Any, range_: Any) -> tuple[Any, Any]:
    """The binning range: given, or the data's (widened by 0.5 each way if empty)."""
    t = _type(a)
    if range_ is not None:
        lo, hi = (ew.convert_element_type(_arraylike(r), t) for r in range_)
    elif abstractify(a).size:
        lo, hi = _min(a), _max(a)
    else:
        lo, hi = ew.convert_element_type(0, t), ew.convert_element_type(1, t)
    same = ew.eq(lo, hi)
    half = ew.convert_element_type(0.5, t)
    return where(same, ew.sub(lo, half), lo), where(same, ew.add(hi, half), hi)


def histogram_bin_edges(a: Any, bins: Any = 10, range: Any = None, weights: Any = None
                        ) -> Any:
    """The edges of ``bins`` equal bins over ``range`` (or the given edges)."""
    a = _to_inexact(ravel(_arraylike(a)))
    if isinstance(bins, str):
        raise NotImplementedError("histogram: string bin estimators are not supported")
    if np.ndim(bins) == 0 and not hasattr(bins, "aval"):
        lo, hi = _range(a, range)
        return linspace(lo, hi, operator.index(bins) + 1, dtype=_type(a))
    return ew.convert_element_type(_arraylike(bins), _type(a))


def _bin_index(a: Any, edges: Any) -> Any:
    """The bin of each value (right edge of the last bin included); values
    outside the edges get an index past the end."""
    nbins = _dims(edges)[0] - 1
    index = ew.sub(searchsorted(edges, a, "right"), np.int32(1))
    last = reshape(lax.slice(edges, (nbins,), (nbins + 1,)), ())
    index = where(ew.eq(a, last), np.int32(nbins - 1), index)
    return where(ew.bitwise_or(ew.lt(index, np.int32(0)), ew.ge(index, np.int32(nbins))),
                 np.int32(nbins), index)


def _counts(index: Any, weights: Any, length: int, t: PT) -> Any:
    from ._functional import _at
    zeros = broadcast_to(ew.convert_element_type(0, t), (length,))
    return _at(zeros)[index].add(weights, mode="fill")


def histogram(a: Any, bins: Any = 10, range: Any = None, weights: Any = None,
              density: Any = None) -> tuple[Any, Any]:
    """``(counts, edges)``: the (weighted) number of values in each bin; with
    ``density``, normalised to integrate to 1."""
    a = _to_inexact(ravel(_arraylike(a)))
    edges = histogram_bin_edges(a, bins, range)
    nbins = _dims(edges)[0] - 1
    if weights is None:
        w, t = broadcast_to(ew.convert_element_type(1, _type(a)), _dims(a)), _type(a)
    else:
        w = ravel(_arraylike(weights))
        w, _ = ew.promote(w, a)
        t = _type(w)
    counts = _counts(_bin_index(a, edges), w, nbins, t)
    if density:
        widths = ew.sub(lax.slice(edges, (1,), (nbins + 1,)), lax.slice(edges, (0,), (nbins,)))
        counts = true_divide(counts, ew.mul(*_broadcast_all(
            ew.convert_element_type(_sum(counts), _type(widths)), widths)))
    return counts, edges


def histogramdd(sample: Any, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: Any = None, density: Any = None) -> tuple[Any, list[Any]]:
    """The multidimensional histogram of ``sample`` (N, D): ``(counts, edges)``
    with ``counts`` of shape (bins_0, ..., bins_{D-1}), integers unless
    weighted or a density (as JAX's)."""
    sample = _to_inexact(_arraylike(sample))
    if abstractify(sample).ndim == 1:
        sample = reshape(sample, (-1, 1))
    n, d = _dims(sample)
    bins_per_dim = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    ranges = list(range) if range is not None else [None] * d
    edges, indices, sizes = [], [], []
    outside = None
    for k in builtins.range(d):
        column = lax.reshape(lax.slice(sample, (0, k), (n, k + 1)), (n,))
        e = histogram_bin_edges(column, bins_per_dim[k], ranges[k])
        nb = _dims(e)[0] - 1
        i = _bin_index(column, e)
        out_k = ew.ge(i, np.int32(nb))
        outside = out_k if outside is None else ew.bitwise_or(outside, out_k)
        edges.append(e)
        indices.append(i)
        sizes.append(nb)
    strides = np.cumprod([1] + sizes[::-1])[-2::-1]
    index = broadcast_to(np.int32(0), (n,))
    for i, stride in zip(indices, strides):
        index = ew.add(index, ew.mul(i, np.int32(stride)))
    index = where(outside, np.int32(math.prod(sizes)), index)
    total = math.prod(sizes)
    if weights is None:
        w, t = broadcast_to(ew.convert_element_type(1, _type(sample)), (n,)), _type(sample)
    else:
        w, _ = ew.promote(ravel(_arraylike(weights)), sample)
        t = _type(w)
    counts = reshape(_counts(index, w, total, t), tuple(sizes))
    if density:
        counts = true_divide(counts, ew.convert_element_type(_sum(counts), t))
        for k, e in enumerate(edges):
            width = ew.sub(lax.slice(e, (1,), (sizes[k] + 1,)), lax.slice(e, (0,), (sizes[k],)))
            shape = [1] * d
            shape[k] = sizes[k]
            counts = true_divide(counts, broadcast_to(reshape(width, shape), tuple(sizes)))
    elif weights is None:       # plain counts are JAX's default integers
        counts = ew.convert_element_type(counts, canonical_type(np.int64))
    return counts, edges


def histogram2d(x: Any, y: Any, bins: Any = 10, range: Any = None, weights: Any = None,
                density: Any = None) -> tuple[Any, Any, Any]:
    """``(counts, x_edges, y_edges)``: ``histogramdd`` of the points (x, y)."""
    x, y = ew.promote(ravel(_arraylike(x)), ravel(_arraylike(y)))
    if isinstance(bins, (list, tuple)) and len(bins) != 2:
        bins = [bins, bins]
    counts, (ex, ey) = histogramdd(stack([x, y], 1), bins, range, weights, density)
    return counts, ex, ey


core.OPERATORS.update({
    "attr:searchsorted": lambda x: lambda v, side="left", sorter=None: searchsorted(
        x, v, side, sorter),
})
