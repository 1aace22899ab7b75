"""NumPy-style layer: statistics.

NaN-ignoring reductions (``nansum``, ``nanmax``, ``nanargmax`` -1 on an
all-NaN slice as in JAX, ``nanmean``, ``nanvar``...), order statistics
(``quantile``/``percentile``/``median`` and their ``nan`` forms, on a sort,
with NumPy's ``linear``, ``lower``, ``higher``, ``nearest`` (ties to the
lower neighbour, as JAX) and ``midpoint`` methods; ``q`` may be traced), ``average``, ``ptp``,
``count_nonzero``, the array API's ``cumulative_sum``/``cumulative_prod``,
``cov`` and ``corrcoef``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from ._core import _to_inexact, _arraylike, broadcast_to, mean, reshape, sum as _sum, \
    true_divide, where
from ._gather_indexing import take_along_axis
from ._indexing import _axis, concatenate, moveaxis
from ._linalg import dot
from ._math import conj, isnan, sqrt
from ._reductions import _axes, all as _all, any as _any, argmax, argmin, cumprod, \
    cumsum, max as _max, min as _min, prod, sort
from .._util import dims as _dims, element_type as _type

__all__ = [
    "nansum", "nanprod", "nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean", "nanvar",
    "nanstd", "nancumsum", "nancumprod", "quantile", "percentile", "median", "nanquantile",
    "nanpercentile", "nanmedian", "average", "ptp", "count_nonzero", "cumulative_sum",
    "cumulative_prod", "cov", "corrcoef",
]




def _inexact(x: Any) -> bool:
    return _type(x).is_floating or _type(x).is_complex


def _replace_nan(x: Any, value: Any) -> Any:
    return where(isnan(x), ew.convert_element_type(value, _type(x)), x) if _inexact(x) else x


# -- NaN-ignoring reductions -------------------------------------------------------------------

def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False
           ) -> Any:
    """``sum`` with NaNs as 0."""
    return _sum(_replace_nan(_arraylike(a), 0), axis, keepdims, dtype)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> Any:
    """``prod`` with NaNs as 1."""
    return prod(_replace_nan(_arraylike(a), 1), axis, keepdims, dtype)


def _nan_extreme(reduce, fill: float):
    def fn(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
        a = _arraylike(a)
        if not _inexact(a):
            return reduce(a, axis, keepdims)
        out = reduce(_replace_nan(a, fill), axis, keepdims)
        return where(_all(isnan(a), axis, keepdims), np.nan, out)
    return fn


nanmax = _nan_extreme(_max, -np.inf)
nanmax.__name__, nanmax.__doc__ = "nanmax", "``max`` ignoring NaNs (NaN if all are)."
nanmin = _nan_extreme(_min, np.inf)
nanmin.__name__, nanmin.__doc__ = "nanmin", "``min`` ignoring NaNs (NaN if all are)."


def _nan_arg(arg, fill: float):
    def fn(a: Any, axis: int | None = None, out: Any = None, keepdims: bool = False) -> Any:
        a = _arraylike(a)
        if not _inexact(a):
            return arg(a, axis, keepdims)
        index = arg(_replace_nan(a, fill), axis, keepdims)
        return where(_all(isnan(a), axis, keepdims), np.int32(-1), index)
    return fn


nanargmax = _nan_arg(argmax, -np.inf)
nanargmax.__name__ = "nanargmax"
nanargmax.__doc__ = "``argmax`` ignoring NaNs (-1 for an all-NaN slice, as in JAX)."
nanargmin = _nan_arg(argmin, np.inf)
nanargmin.__name__ = "nanargmin"
nanargmin.__doc__ = "``argmin`` ignoring NaNs (-1 for an all-NaN slice, as in JAX)."


def _count(a: Any, axis: Any, keepdims: bool) -> Any:
    """The number of non-NaN elements, as ``a``'s inexact type."""
    valid = ew.not_(isnan(a))
    return ew.convert_element_type(_sum(valid, axis, keepdims), _real_type(a))


def _real_type(a: Any) -> PT:
    t = _type(a)
    return {PT.C64: PT.F32, PT.C128: PT.F64}.get(t, t)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False) -> Any:
    """The mean of the non-NaN elements (NaN if there are none)."""
    a = _to_inexact(_arraylike(a))
    if dtype is not None:
        a = ew.convert_element_type(a, dtype)
    return true_divide(nansum(a, axis, keepdims=keepdims), _count(a, axis, keepdims))


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False) -> Any:
    """The variance of the non-NaN elements, divided by ``count - ddof``."""
    a = _to_inexact(_arraylike(a))
    centred = ew.sub(a, broadcast_to(nanmean(a, axis, keepdims=True), _dims(a)))
    squared = ew.real(ew.mul(centred, conj(centred))) if _type(a).is_complex else \
        ew.mul(centred, centred)
    count = ew.sub(_count(a, axis, keepdims), ew.convert_element_type(ddof, _real_type(a)))
    count = ew.max(count, ew.convert_element_type(0, _real_type(a)))
    return true_divide(nansum(squared, axis, keepdims=keepdims), count)


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False) -> Any:
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims))


def nancumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``cumsum`` with NaNs as 0."""
    return cumsum(_replace_nan(_arraylike(a), 0), axis, dtype)


def nancumprod(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
    """``cumprod`` with NaNs as 1."""
    return cumprod(_replace_nan(_arraylike(a), 1), axis, dtype)


# -- order statistics --------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile(a: Any, q: Any, axis: Any, method: str, keepdims: bool, ignore_nan: bool,
              percent: bool = False) -> Any:
    """Sort along the (flattened) axes, then read position ``q (n - 1)`` (``n``:
    the non-NaN count if ``ignore_nan``) by ``method``."""
    if method not in _METHODS:
        raise ValueError(f"quantile: method must be one of {_METHODS}, got {method!r}")
    a = _to_inexact(_arraylike(a))
    q = _arraylike(q)
    rank = abstractify(a).ndim
    axes = _axes("quantile", a, axis)
    kept = [d for i, d in enumerate(_dims(a)) if i not in axes]
    moved = moveaxis(a, axes, tuple(range(rank - len(axes), rank)))
    n_axis = int(np.prod([_dims(a)[i] for i in axes], dtype=np.int64))
    x = sort(reshape(moved, tuple(kept) + (n_axis,)), -1)                # NaNs last
    t = _real_type(x)
    qf = ew.convert_element_type(q, t)
    if percent:
        qf = ew.div(qf, ew.convert_element_type(100, t))
    if ignore_nan:
        count = _sum(ew.not_(isnan(x)), -1, keepdims=True)
    else:
        count = broadcast_to(np.int32(n_axis), tuple(kept) + (1,))
    last = ew.convert_element_type(ew.max(ew.sub(count, np.int32(1)), np.int32(0)), t)
    # positions: (*q, *kept, 1)
    shape = _dims(qf) + tuple(kept) + (1,)
    pos = ew.mul(broadcast_to(reshape(qf, _dims(qf) + (1,) * (len(kept) + 1)), shape),
                 broadcast_to(last, shape))
    lo, hi = ew.floor(pos), ew.ceil(pos)
    x_b = broadcast_to(x, _dims(qf) + tuple(kept) + (n_axis,))

    def read(index: Any) -> Any:
        i = ew.convert_element_type(index, PT.S32)
        return take_along_axis(x_b, i, -1, mode="clip")

    below, above = read(lo), read(hi)
    frac = ew.sub(pos, lo)
    choose = {
        "linear": lambda: ew.add(below, ew.mul(ew.sub(above, below), ew.convert_element_type(
            frac, _type(below)))),
        "lower": lambda: below,
        "higher": lambda: above,
        # JAX's nearest: a tie (frac exactly 0.5) takes the lower neighbour
        "nearest": lambda: where(ew.le(frac, ew.convert_element_type(0.5, _type(frac))),
                                 below, above),
        "midpoint": lambda: ew.mul(ew.add(below, above), ew.convert_element_type(0.5, _type(
            below))),
    }
    out = reshape(choose[method](), shape[:-1])
    if ignore_nan:
        empty = ew.eq(reshape(count, tuple(kept)), np.int32(0))
        out = where(empty, np.nan, out)
    elif n_axis:
        out = where(_any(isnan(x), -1), np.nan, out)
    if keepdims:
        full = [1 if i in axes else d for i, d in enumerate(_dims(a))]
        out = reshape(out, _dims(qf) + tuple(full))
    return out


def quantile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
             method: str = "linear", keepdims: bool = False) -> Any:
    """The ``q``-th quantiles (``q`` in [0, 1], any shape: it leads the result)
    over ``axis``; NaN where a slice has a NaN."""
    return _quantile(a, q, axis, method, keepdims, ignore_nan=False)


def nanquantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False) -> Any:
    """``quantile`` of the non-NaN elements."""
    return _quantile(a, q, axis, method, keepdims, ignore_nan=True)


def percentile(a: Any, q: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
               method: str = "linear", keepdims: bool = False) -> Any:
    """``quantile`` with ``q`` in percent."""
    return _quantile(a, q, axis, method, keepdims, ignore_nan=False, percent=True)


def nanpercentile(a: Any, q: Any, axis: Any = None, out: Any = None,
                  overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False) -> Any:
    return _quantile(a, q, axis, method, keepdims, ignore_nan=True, percent=True)


def median(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
           keepdims: bool = False) -> Any:
    """The middle value (the mean of the two middle ones) over ``axis``."""
    return quantile(a, 0.5, axis, keepdims=keepdims)


def nanmedian(a: Any, axis: Any = None, out: Any = None, overwrite_input: bool = False,
              keepdims: bool = False) -> Any:
    return nanquantile(a, 0.5, axis, keepdims=keepdims)


# -- other statistics --------------------------------------------------------------------------

def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The (``weights``-)weighted mean over ``axis``; with ``returned``, also the
    sum of the weights."""
    a = _to_inexact(_arraylike(a))
    if weights is None:
        avg = mean(a, axis, keepdims)
        if not returned:
            return avg
        count = np.prod([_dims(a)[i] for i in _axes("average", a, axis)], dtype=np.int64)
        return avg, broadcast_to(ew.convert_element_type(int(count), _type(avg)), _dims(avg))
    w = _arraylike(weights)
    if _dims(w) != _dims(a):
        if axis is None or abstractify(w).ndim != 1:
            raise ValueError("average: 1D weights expected when shapes of a and weights differ")
        ax = _axis("average", axis, abstractify(a).ndim)
        w = lax.broadcast_in_dim(w, _dims(a), (ax,))
    a, w = ew.promote(a, _to_inexact(w))
    total = _sum(w, axis, keepdims)
    avg = true_divide(_sum(ew.mul(a, w), axis, keepdims), total)
    return (avg, broadcast_to(total, _dims(avg))) if returned else avg


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """``max - min`` over ``axis``."""
    a = _arraylike(a)
    return ew.sub(_max(a, axis, keepdims), _min(a, axis, keepdims))


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The number of nonzero elements over ``axis`` (s32)."""
    a = _arraylike(a)
    return _sum(ew.ne(a, ew.convert_element_type(0, _type(a))), axis, keepdims, dtype=PT.S32)


def _cumulative(name: str, fn, identity: int):
    def cumulative(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
        x = _arraylike(x)
        rank = abstractify(x).ndim
        if axis is None:
            if rank > 1:
                raise ValueError(f"{name}: axis must be given for arrays of more than one "
                                 f"dimension")
            axis = 0
        if rank == 0:
            x, rank = reshape(x, (1,)), 1
        axis = _axis(name, axis, rank)
        out = fn(x, axis, dtype)
        if include_initial:
            start = [(0, 0, 0)] * rank
            start[axis] = (1, 0, 0)
            out = lax.pad(out, ew.convert_element_type(identity, _type(out)), start)
        return out
    cumulative.__name__ = name
    cumulative.__doc__ = (f"The array API's ``{name}`` along ``axis`` (needed above 1-D), "
                          f"starting with {identity} if ``include_initial``.")
    return cumulative


cumulative_sum = _cumulative("cumulative_sum", cumsum, 0)
cumulative_prod = _cumulative("cumulative_prod", cumprod, 1)


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: int | None = None,
        fweights: Any = None, aweights: Any = None) -> Any:
    """The covariance matrix of the variables (rows, or columns if not ``rowvar``)
    with optional frequency and analytic weights, as NumPy computes it."""
    x = _arraylike(m)
    if abstractify(x).ndim > 2:
        raise ValueError("cov: m has more than 2 dimensions")
    x = _to_inexact(reshape(x, (1, -1)) if abstractify(x).ndim < 2 else x)
    if not rowvar and _dims(x)[0] != 1:
        x = lax.transpose(x, (1, 0))
    if y is not None:
        yy = _to_inexact(_arraylike(y))
        yy = reshape(yy, (1, -1)) if abstractify(yy).ndim < 2 else yy
        if not rowvar and _dims(yy)[0] != 1:
            yy = lax.transpose(yy, (1, 0))
        x = concatenate(ew.promote(x, yy), 0)
    if ddof is None:
        ddof = 0 if bias else 1
    n = _dims(x)[1]
    w = None
    if fweights is not None:
        w = _to_inexact(_arraylike(fweights))
    if aweights is not None:
        aw = _to_inexact(_arraylike(aweights))
        w = aw if w is None else ew.mul(*ew.promote(w, aw))
    if w is None:
        avg = mean(x, 1, keepdims=True)
        fact = ew.convert_element_type(n - ddof, _real_type(x))
    else:
        x, w = ew.promote(x, w)
        w_sum = _sum(w)
        avg = true_divide(_sum(ew.mul(x, broadcast_to(w, _dims(x))), 1, keepdims=True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = ew.sub(w_sum, ew.convert_element_type(ddof, _type(w_sum)))
        else:
            aw = ew.convert_element_type(_to_inexact(_arraylike(aweights)), _type(w))
            fact = ew.sub(w_sum, ew.div(ew.mul(ew.convert_element_type(ddof, _type(w)),
                                               _sum(ew.mul(w, aw))), w_sum))
    centred = ew.sub(x, broadcast_to(avg, _dims(x)))
    weighted = centred if w is None else ew.mul(centred, broadcast_to(w, _dims(x)))
    c = dot(weighted, lax.transpose(conj(centred), (1, 0)))
    fact = ew.max(fact, ew.convert_element_type(0, _type(fact)))
    out = true_divide(c, fact)
    return reshape(out, ()) if _dims(out) == (1, 1) else out


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients: ``cov`` normalised by the standard
    deviations (real parts clipped to [-1, 1])."""
    c = cov(x, y, rowvar)
    if abstractify(c).ndim == 0:
        return true_divide(c, c)
    d = _diag(c)
    std = sqrt(ew.real(d) if _type(d).is_complex else d)
    n = _dims(c)[0]
    c = true_divide(c, broadcast_to(reshape(std, (n, 1)), (n, n)))
    c = true_divide(c, broadcast_to(reshape(std, (1, n)), (n, n)))
    if _type(c).is_complex:
        return ew.complex(ew.clamp(-1.0, ew.real(c), 1.0), ew.clamp(-1.0, ew.imag(c), 1.0))
    return ew.clamp(ew.convert_element_type(-1, _type(c)), c, ew.convert_element_type(1, _type(c)))


def _diag(c: Any) -> Any:
    from ._shaping import diagonal
    return diagonal(c)


core.OPERATORS.update({
    "attr:ptp": lambda x: lambda axis=None, out=None, keepdims=False: ptp(x, axis, out, keepdims),
})
