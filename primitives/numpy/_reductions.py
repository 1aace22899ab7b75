"""NumPy-style layer: reductions, sorting and cumulative reductions.

``max``/``amax``, ``min``/``amin``, ``prod``, ``any``, ``all``, ``argmax``,
``argmin``, ``sort``, ``argsort``, ``cumsum``, ``cumprod``, ``logsumexp``,
``var``, ``std``, and the array methods ``.max()``, ``.min()``, ``.prod()``,
``.argmax()``, ``.argmin()``, ``.any()``, ``.all()``, ``.cumsum()``,
``.cumprod()``, ``.argsort()``, ``.std()`` (``_jax_reductions`` gives the
public functions and the methods JAX's signatures, ``.var()`` too).  ``axis=None`` reduces (or, for
``argmax``/``sort``/``cumsum``..., flattens) the whole array; indices are
``s32`` (JAX's default); ``prod``/``cumsum`` of ``bool`` count in ``s32``.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import ShapeError, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import reductions as red
from .. import sorting, windows
from .._util import canonical_dims
from ..shape_ops import broadcasted_iota, reshape as _lax_reshape, rev
from ._core import _to_inexact, mean, sum, subtract, true_divide, where

__all__ = ["max", "amax", "min", "amin", "prod", "any", "all", "argmax", "argmin", "sort",
           "argsort", "cumsum", "cumprod", "logsumexp", "var", "std"]


def _array(a: Any) -> Any:
    """Sequences become NumPy arrays; arrays (bf16 ones too), traced values and
    scalars pass through."""
    return np.asarray(a) if isinstance(a, (list, tuple)) else a


def _axes(fn: str, x: Any, axis: int | Sequence[int] | None) -> tuple[int, ...]:
    aval = abstractify(x)
    if axis is None:
        return tuple(range(aval.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    axes = canonical_dims(fn, "axis", axes, aval.ndim, aval)
    if len(set(axes)) != len(axes):
        raise ShapeError(fn, f"axis {tuple(axes)} contains a repeated axis", aval)
    return axes


def _keep(out: Any, x: Any, axes: Sequence[int], keepdims: bool) -> Any:
    """Put back the reduced dimensions as 1s if ``keepdims``."""
    if not keepdims:
        return out
    dims = abstractify(x).dimensions
    return _lax_reshape(out, [1 if i in axes else d for i, d in enumerate(dims)])


def _flat(x: Any) -> Any:
    return _lax_reshape(x, (abstractify(x).size,))


def _reduction(fn: str, lax_fn: Callable[[Any, Sequence[int]], Any],
               prepare: Callable[[Any], Any] = lambda x: x) -> Callable[..., Any]:
    def reduce(a: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        x = prepare(_array(a))
        axes = _axes(fn, x, axis)
        return _keep(lax_fn(x, axes), x, axes, keepdims)
    reduce.__name__ = fn
    reduce.__doc__ = f"NumPy's ``{fn}`` over ``axis`` (all axes if ``None``)."
    return reduce


def _as_pred(x: Any) -> Any:
    return ew.convert_element_type(x, PT.PRED)  # x != 0


def _bool_as_int(x: Any) -> Any:
    return ew.convert_element_type(x, core.default_int()) if abstractify(x).element_type is \
        PT.PRED else x


max = amax = _reduction("max", red.reduce_max)
min = amin = _reduction("min", red.reduce_min)
any = _reduction("any", red.reduce_or, _as_pred)
all = _reduction("all", red.reduce_and, _as_pred)
_prod = _reduction("prod", red.reduce_prod, _bool_as_int)


def prod(a: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False,
         dtype: Any = None) -> Any:
    """NumPy's ``prod`` over ``axis`` (all axes if ``None``)."""
    x = _array(a)
    return _prod(x if dtype is None else ew.convert_element_type(x, dtype), axis, keepdims)


def _arg(fn: str, lax_fn: Callable[..., Any]) -> Callable[..., Any]:
    def arg(a: Any, axis: int | None = None, keepdims: bool = False) -> Any:
        x = _array(a)
        if axis is None:
            out = lax_fn(_flat(x), 0, core.default_int())
            return _lax_reshape(out, (1,) * abstractify(x).ndim) if keepdims else out
        (axis,) = _axes(fn, x, axis)
        return _keep(lax_fn(x, axis, core.default_int()), x, (axis,), keepdims)
    arg.__name__ = fn
    arg.__doc__ = (f"NumPy's ``{fn}``: the first extreme index along ``axis`` (of the "
                   f"flattened array if ``None``), as s32; a NaN wins.")
    return arg


argmax = _arg("argmax", red.argmax)
argmin = _arg("argmin", red.argmin)


def _along(fn: str, a: Any, axis: int | None) -> tuple[Any, int]:
    """The array and the axis to work along (the flattened array if ``None``)."""
    x = _array(a)
    if axis is None:
        return _flat(x), 0
    return x, _axes(fn, x, axis)[0]


def sort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *,
         stable: bool = True, descending: bool = False) -> Any:
    """Sorted copy along ``axis`` (NaNs last; ``descending``: reversed)."""
    x, axis = _along("sort", a, axis)
    out = sorting.sort(x, dimension=axis, is_stable=stable)
    return rev(out, (axis,)) if descending else out


def argsort(a: Any, axis: int | None = -1, kind: Any = None, order: Any = None, *,
            stable: bool = True, descending: bool = False) -> Any:
    """The indices (JAX's default int) that sort ``a`` along ``axis`` (stable;
    NaNs last).  ``descending``: largest first, ties in their original order
    (JAX's: a stable sort of the reversed array, its indices reversed back)."""
    x, axis = _along("argsort", a, axis)
    n = abstractify(x).dimensions[axis]
    if descending:
        x = rev(x, (axis,))
    index = broadcasted_iota(core.default_int(), abstractify(x).dimensions, axis)
    out = sorting.sort((x, index), dimension=axis, is_stable=stable, num_keys=1)[1]
    if descending:
        last = ew.convert_element_type(n - 1, abstractify(out).element_type)
        out = ew.sub(last, rev(out, (axis,)))
    return out


def _cumulative(fn: str, lax_fn: Callable[..., Any]) -> Callable[..., Any]:
    def cumulative(a: Any, axis: int | None = None, dtype: Any = None) -> Any:
        x, axis = _along(fn, a, axis)
        x = _bool_as_int(x) if dtype is None else ew.convert_element_type(x, dtype)
        return lax_fn(x, axis)
    cumulative.__name__ = fn
    cumulative.__doc__ = f"NumPy's ``{fn}`` along ``axis`` (of the flattened array if ``None``)."
    return cumulative


cumsum = _cumulative("cumsum", windows.cumsum)
cumprod = _cumulative("cumprod", windows.cumprod)


def logsumexp(a: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(a)))`` over ``axis``, computed around the maximum."""
    x = _to_inexact(_array(a))
    axes = _axes("logsumexp", x, axis)
    peak = _keep(red.reduce_max(x, axes), x, axes, True)
    peak = where(ew.is_finite(peak), peak, 0)  # infinities: shift by nothing
    shifted = ew.exp(subtract(x, peak))
    out = ew.add(ew.log(sum(shifted, axes, keepdims=True)), peak)
    return out if keepdims else _lax_reshape(out, [d for i, d in enumerate(
        abstractify(x).dimensions) if i not in axes])


def var(a: Any, axis: int | Sequence[int] | None = None, ddof: int = 0,
        keepdims: bool = False) -> Any:
    """Variance over ``axis``: the mean squared deviation, divided by ``N - ddof``."""
    x = _to_inexact(_array(a))
    axes = _axes("var", x, axis)
    dev = subtract(x, mean(x, axes, keepdims=True))
    if abstractify(dev).element_type.is_complex:
        dev = ew.abs(dev)
    dims = abstractify(x).dimensions
    count = int(np.prod([dims[i] for i in axes], dtype=np.int64))
    return true_divide(sum(ew.mul(dev, dev), axes, keepdims), builtins.max(count - ddof, 0))


def std(a: Any, axis: int | Sequence[int] | None = None, ddof: int = 0,
        keepdims: bool = False) -> Any:
    """Standard deviation over ``axis``: ``sqrt(var(...))``."""
    return ew.sqrt(var(a, axis, ddof, keepdims))


core.OPERATORS.update({
    "attr:max": lambda x: lambda axis=None, keepdims=False: max(x, axis, keepdims),
    "attr:min": lambda x: lambda axis=None, keepdims=False: min(x, axis, keepdims),
    "attr:prod": lambda x: lambda axis=None, keepdims=False, dtype=None: prod(
        x, axis, keepdims, dtype),
    "attr:any": lambda x: lambda axis=None, keepdims=False: any(x, axis, keepdims),
    "attr:all": lambda x: lambda axis=None, keepdims=False: all(x, axis, keepdims),
    "attr:argmax": lambda x: lambda axis=None, keepdims=False: argmax(x, axis, keepdims),
    "attr:argmin": lambda x: lambda axis=None, keepdims=False: argmin(x, axis, keepdims),
    "attr:argsort": lambda x: lambda axis=-1, kind=None, order=None, *, stable=True, \
    descending=False: argsort(x, axis, stable=stable, descending=descending),
    "attr:sort": lambda x: lambda axis=-1, kind=None, order=None, *, stable=True, \
    descending=False: sort(x, axis, stable=stable, descending=descending),
    "attr:cumsum": lambda x: lambda axis=None, dtype=None: cumsum(x, axis, dtype),
    "attr:cumprod": lambda x: lambda axis=None, dtype=None: cumprod(x, axis, dtype),
    "attr:std": lambda x: lambda axis=None, ddof=0, keepdims=False: std(x, axis, ddof,
                                                                        keepdims),
})
