"""NumPy-style layer: functions whose result's shape depends on values.

``nonzero``, ``flatnonzero``, ``argwhere``, ``where(condition)``,
``compress``, ``extract``, ``unique`` (and the array API's ``unique_*``),
the 1-D set operations, ``bincount`` and ``trim_zeros``.  As in JAX they
compute eagerly on concrete inputs, and under tracing (``jit``, ``vmap``,
``grad``) need ``size=`` (and take ``fill_value=`` for the padding);
otherwise they raise a ``ConcretizationError`` saying so.  ``isin`` has a
static shape and works everywhere.

One algorithm serves both: the result's size is counted eagerly (from the
concrete values) or given, and the positions of the selected elements are
found by sorting their iotas to the front.
"""
from __future__ import annotations

import builtins
from collections import namedtuple
from typing import Any

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import ConcretizationError, Tracer, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from .. import sorting
from ._core import _broadcast_all, _arraylike, broadcast_to, reshape
from ._gather_indexing import take
from ._indexing import _axis, concatenate, ravel, stack
from ._reductions import any as _any
from ._reductions import cumsum
from .._util import dims as _dims, element_type as _type

__all__ = [
    "nonzero", "flatnonzero", "argwhere", "compress", "extract", "unique", "unique_all",
    "unique_counts", "unique_inverse", "unique_values", "union1d", "intersect1d", "setdiff1d",
    "setxor1d", "isin", "bincount", "trim_zeros",
]




def _size(fn: str, size: int | None, values: Any, count) -> int:
    """The result's size: ``size`` if given, else counted from concrete ``values``."""
    if size is not None:
        return int(size)
    if isinstance(values, Tracer):
        raise ConcretizationError(
            f"{fn}: the size of the result depends on the values of a traced array (under "
            f"jit, vmap or grad); pass size= (and fill_value= for the padding) to fix it")
    return int(count(np.asarray(values)))


def _selected_positions(mask: Any, size: int) -> tuple[Any, Any]:
    """The first ``size`` positions where the 1-D ``mask`` holds (s32, in order),
    and which of them are real (not padding): iotas sorted with the unselected
    pushed past the end."""
    n = _dims(mask)[0]
    iota = lax.iota(PT.S32, n)
    key = ew.select(mask, iota, broadcast_to(np.int32(n), (n,)))
    ordered = sorting.sort(key, dimension=0) if n else key
    if size > n:
        ordered = lax.pad(ordered, np.int32(n), [(0, size - n, 0)])
    ordered = lax.slice(ordered, (0,), (size,))
    return ordered, ew.lt(ordered, np.int32(n))


def _fill(values: Any, valid: Any, fill_value: Any, default: Any) -> Any:
    fill = default if fill_value is None else fill_value
    return ew.select(valid, values, broadcast_to(ew.convert_element_type(fill, _type(values)),
                                                 _dims(values)))


# -- nonzero and friends -----------------------------------------------------------------------

def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """The s32 indices of the nonzero elements, one array per dimension; with
    ``size``, the first ``size`` of them, padded with ``fill_value`` (0)."""
    a = _arraylike(a)
    if abstractify(a).ndim == 0:
        raise ValueError("nonzero is not defined for rank-0 arrays; use atleast_1d")
    mask = ravel(ew.ne(a, ew.convert_element_type(0, _type(a))))
    n = _size("nonzero", size, mask, np.count_nonzero)
    flat, valid = _selected_positions(mask, n)
    dims = _dims(a)
    out = []
    for stride, dim in zip(np.cumprod((1,) + dims[::-1])[-2::-1], dims):
        coord = ew.rem(ew.div(flat, np.int32(stride)), np.int32(builtins.max(dim, 1)))
        fill = 0 if fill_value is None else (fill_value[len(out)] if isinstance(
            fill_value, (tuple, list)) else fill_value)
        out.append(_fill(coord, valid, fill, 0))
    return tuple(out)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The s32 indices of the nonzero elements of the flattened array."""
    return nonzero(ravel(_arraylike(a)), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero elements as rows: ``(count, ndim)``."""
    a = _arraylike(a)
    if abstractify(a).ndim == 0:  # NumPy: (1, 0) if a is nonzero, else (0, 0)
        count = _size("argwhere", size, a, np.count_nonzero)
        return broadcast_to(np.int32(0), (count, 0))
    return stack(nonzero(a, size=size, fill_value=fill_value), 1)


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0) -> Any:
    """The slices of ``a`` along ``axis`` (flattened if None) where ``condition``
    holds (it may be shorter than the axis)."""
    a = _arraylike(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis("compress", axis, abstractify(a).ndim)
    condition = _arraylike(condition)
    cond = ravel(ew.ne(condition, ew.convert_element_type(0, _type(condition))))
    n = _dims(a)[axis]
    if _dims(cond)[0] > n:
        raise ValueError("compress: condition is longer than the axis")
    if _dims(cond)[0] < n:
        cond = lax.pad(cond, False, [(0, n - _dims(cond)[0], 0)])
    count = _size("compress", size, cond, np.count_nonzero)
    positions, valid = _selected_positions(cond, count)
    picked = take(a, positions, axis=axis, mode="clip") if n else \
        broadcast_to(ew.convert_element_type(0, _type(a)), _dims(a)[:axis] + (count,) +
                     _dims(a)[axis + 1:])
    shape = [1] * abstractify(a).ndim
    shape[axis] = count
    return _fill(picked, broadcast_to(reshape(valid, shape), _dims(picked)), fill_value, 0)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of ``arr`` where ``condition`` holds (both flattened)."""
    return compress(ravel(_arraylike(condition)), ravel(_arraylike(arr)), size=size,
                    fill_value=fill_value)


# -- unique ------------------------------------------------------------------------------------

def _differs(x: Any, y: Any, equal_nan: bool) -> Any:
    out = ew.ne(x, y)
    if equal_nan and (_type(x).is_floating or _type(x).is_complex):
        both_nan = ew.bitwise_and(ew.ne(x, x), ew.ne(y, y))
        out = ew.bitwise_and(out, ew.not_(both_nan))
    return out


def _count_unique(values: np.ndarray, equal_nan: bool = True) -> int:
    return np.unique(values, equal_nan=equal_nan).size if values.size else 0


def _unique_flat(x: Any, valid: Any, size: int | None, fill_value: Any, equal_nan: bool,
                 fn: str = "unique") -> dict[str, Any]:
    """Unique values of 1-D ``x`` among the ``valid`` entries, sorted, with the
    index of each one's first occurrence, the inverse map and the counts."""
    n = _dims(x)[0]
    if size is None and not isinstance(x, Tracer) and not isinstance(valid, Tracer):
        size = _count_unique(np.asarray(x)[np.asarray(valid)], equal_nan)
    count = _size(fn, size, x, lambda v: _count_unique(v, equal_nan))
    iota = lax.iota(PT.S32, n)
    invalid = ew.convert_element_type(ew.not_(valid), PT.S32)
    if n:  # invalid entries last, then by value (NaNs last), stably
        invalid_s, sorted_x, perm = sorting.sort((invalid, x, iota), dimension=0, num_keys=2)
    else:
        invalid_s, sorted_x, perm = invalid, x, iota
    keep = ew.eq(invalid_s, np.int32(0))
    if n:
        first = concatenate([broadcast_to(True, (1,)),
                             _differs(lax.slice(sorted_x, (1,), (n,)),
                                      lax.slice(sorted_x, (0,), (n - 1,)), equal_nan)], 0)
    else:
        first = keep
    first = ew.bitwise_and(first, keep)
    starts, real = _selected_positions(first, count)
    values = take(sorted_x, starts, mode="clip") if n else \
        broadcast_to(ew.convert_element_type(0, _type(x)), (count,))
    default = take(values, np.zeros((), np.int32)) if count else 0
    out = {"values": _fill(values, real, fill_value, default)}
    index = take(perm, starts, mode="clip") if n else broadcast_to(np.int32(0), (count,))
    out["indices"] = _fill(index, real, None, take(index, np.zeros((), np.int32)) if count
                           else 0)
    group = ew.sub(cumsum(first), np.int32(1)) if n else iota        # sorted pos -> unique #
    out["inverse"] = _scatter_back(group, perm, n)
    total = ew.convert_element_type(_sum_s32(keep), PT.S32)    # the valid entries
    if count:  # a unique value's count: the next one's start (or the total) minus its start
        real_next = lax.pad(lax.slice(real, (1,), (count,)), False, [(0, 1, 0)])
        start_next = lax.pad(lax.slice(starts, (1,), (count,)), np.int32(0), [(0, 1, 0)])
        ends = ew.select(real_next, start_next, broadcast_to(total, (count,)))
    else:
        ends = starts
    out["counts"] = _fill(ew.sub(ends, starts), real, 0, 0)
    return out


def _sum_s32(mask: Any) -> Any:
    from ._core import sum as _sum
    return _sum(mask)


def _scatter_back(values: Any, perm: Any, n: int) -> Any:
    """``out[perm[i]] = values[i]``."""
    if not n:
        return values
    from ._functional import _at
    return _at(broadcast_to(np.int32(0), (n,)))[perm].set(values)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None, sorted: bool = True) -> Any:
    """The sorted unique elements (NaNs equal if ``equal_nan``), with the first
    indices, the inverse (the input's shape) and the counts on request; with
    ``size``, padded with ``fill_value`` (default: the smallest unique value)."""
    if axis is not None:
        raise NotImplementedError("unique: axis is not supported")
    ar = _arraylike(ar)
    x = ravel(ar)
    valid = broadcast_to(True, _dims(x))
    out = _unique_flat(x, valid, size, fill_value, equal_nan)
    if not (return_index or return_inverse or return_counts):
        return out["values"]
    result = [out["values"]]
    if return_index:
        result.append(out["indices"])
    if return_inverse:
        result.append(reshape(out["inverse"], _dims(ar)))
    if return_counts:
        result.append(out["counts"])
    return tuple(result)


UniqueAllResult = namedtuple("UniqueAllResult", "values indices inverse_indices counts")
UniqueCountsResult = namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = namedtuple("UniqueInverseResult", "values inverse_indices")


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The array API's ``unique_all``: values, first indices, inverse, counts (NaNs
    distinct, as in all the ``unique_*``)."""
    return UniqueAllResult(*unique(x, True, True, True, equal_nan=False, size=size,
                                   fill_value=fill_value))


def unique_counts(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                      fill_value=fill_value))


def unique_inverse(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# -- 1-D set operations ------------------------------------------------------------------------

def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, method: str = "auto") -> Any:
    """Whether each element of ``element`` is in ``test_elements`` (compared with
    every one of them)."""
    element = _arraylike(element)
    tests = ravel(_arraylike(test_elements))
    element, tests = ew.promote(element, tests)
    rank = abstractify(element).ndim
    if _dims(tests)[0] == 0:
        out = broadcast_to(False, _dims(element))
    else:
        expanded = lax.expand_dims(element, (rank,))
        out = _any(ew.eq(*_broadcast_all(expanded, tests)), rank)
    return ew.not_(out) if invert else out


def _set_op(name: str, x: Any, valid: Any, size: int | None, fill_value: Any) -> Any:
    return _unique_flat(x, valid, size, fill_value, True, name)["values"]


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique elements of either array."""
    x = concatenate([ravel(_arraylike(ar1)), ravel(_arraylike(ar2))], 0)
    return _set_op("union1d", x, broadcast_to(True, _dims(x)), size, fill_value)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique elements of both arrays (with their first indices in
    each if ``return_indices``)."""
    a, b = ew.promote(ravel(_arraylike(ar1)), ravel(_arraylike(ar2)))
    values = _set_op("intersect1d", a, isin(a, b), size, fill_value)
    if not return_indices:
        return values
    ia = _unique_flat(a, isin(a, b), size, fill_value, True, "intersect1d")["indices"]
    ib = _unique_flat(b, isin(b, a), size, fill_value, True, "intersect1d")["indices"]
    return values, ia, ib


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """The sorted unique elements of ``ar1`` not in ``ar2``."""
    a, b = ew.promote(ravel(_arraylike(ar1)), ravel(_arraylike(ar2)))
    return _set_op("setdiff1d", a, isin(a, b, invert=True), size, fill_value)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """The sorted unique elements in exactly one of the arrays."""
    a, b = ew.promote(ravel(_arraylike(ar1)), ravel(_arraylike(ar2)))
    x = concatenate([a, b], 0)
    valid = concatenate([isin(a, b, invert=True), isin(b, a, invert=True)], 0)
    return _set_op("setxor1d", x, valid, size, fill_value)


# -- counting and trimming ---------------------------------------------------------------------

def bincount(x: Any, weights: Any = None, minlength: int = 0, *, length: int | None = None
             ) -> Any:
    """The number of occurrences (or summed ``weights``) of each value of the
    non-negative integers ``x``; ``length`` fixes the size under tracing
    (values past it are dropped)."""
    x = ravel(_arraylike(x))
    if not (_type(x).is_integral or _type(x) is PT.PRED):
        raise TypeError("bincount: x must be an array of non-negative integers")
    if length is None:
        length = _size("bincount", None, x,
                       lambda v: builtins.max(int(v.max()) + 1 if v.size else 0, minlength))
    length = builtins.max(int(length), int(minlength))
    if weights is None:
        w = broadcast_to(np.int32(1), _dims(x))
    else:
        w = ravel(_arraylike(weights))
    from ._functional import _at
    zeros = broadcast_to(ew.convert_element_type(0, _type(w)), (length,))
    return _at(zeros)[x].add(w, mode="fill")


def trim_zeros(filt: Any, trim: str = "fb") -> Any:
    """The 1-D ``filt`` without its leading ("f") and/or trailing ("b") zeros
    (concrete input only: the result's size depends on the values)."""
    if isinstance(filt, Tracer):
        raise ConcretizationError("trim_zeros: the size of the result depends on the values "
                                  "of a traced array")
    values = np.asarray(filt)
    nz = np.flatnonzero(values)
    start = nz[0] if nz.size and "f" in trim.lower() else (0 if nz.size else values.size)
    stop = nz[-1] + 1 if nz.size and "b" in trim.lower() else values.size
    return lax.slice(_arraylike(filt), (int(start),), (int(builtins.max(start, stop)),))


# -- array methods of traced values -------------------------------------------------------------

core.OPERATORS.update({
    "attr:nonzero": lambda x: lambda *, size=None, fill_value=None: nonzero(
        x, size=size, fill_value=fill_value),
    "attr:compress": lambda x: lambda condition, axis=None, *, size=None, fill_value=0: compress(
        condition, x, axis, size=size, fill_value=fill_value),
})
