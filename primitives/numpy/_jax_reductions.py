"""The reductions with ``jax.numpy``'s signatures: ``sum(a, axis, dtype, out,
keepdims, initial, where, promote_integers)``, ``mean``/``var``/``std`` with
``dtype``, ``ddof``/``correction`` and ``where``, ``max``/``min`` with
``initial`` and ``where``, ``argmax(a, axis, out, keepdims)``, ``cumsum(a,
axis, dtype)``.  They wrap the internal reductions (``_core``,
``_reductions``), whose positional order the op set's own code uses, and
are the array methods too (``x.sum(dtype=...)``, ``x.var()``...).

As JAX's: ``out`` must be None; sums and products of small integers (and
booleans) are in the default integer type (``promote_integers``); means of
integers are in the default float type; a ``where`` mask of ``max``/``min``
needs an ``initial``.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.config import canonicalize_type
from numxla.tracer.core import abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from . import _core, _reductions
from ._types import element_type

__all__ = ["sum", "prod", "mean", "var", "std", "max", "min", "amax", "amin", "any", "all",
           "argmax", "argmin", "cumsum", "cumprod"]

_Axis = int | Sequence[int] | None


def _no_out(fn: str, out: Any) -> None:
    if out is not None:
        raise NotImplementedError(f"{fn}: the 'out' argument is not supported (arrays are "
                                  f"immutable, as in JAX)")


def _array(fn: str, a: Any) -> Any:
    """``a``, refused if a list or tuple, as JAX's reductions refuse them
    (``jnp.sum([1, 2])`` is a TypeError: wrap it in ``jnp.array``)."""
    if isinstance(a, (list, tuple)):
        raise TypeError(f"{fn} requires ndarray or scalar arguments, got "
                        f"{type(a).__name__} at position 0.")
    return a


def _promoted_integers(x: Any) -> Any:
    """Booleans and narrow integers widened to the default (unsigned) integer."""
    t = abstractify(x).element_type
    if t is PT.PRED:
        return ew.convert_element_type(x, core.default_int())
    if t.is_integral:
        wide = canonicalize_type(PT.S64 if t.is_signed else PT.U64)
        if t.numpy_dtype.itemsize < wide.numpy_dtype.itemsize:
            return ew.convert_element_type(x, wide)
    return x


def _masked(x: Any, where: Any, fill: Any) -> Any:
    if where is None:
        return x
    return _core.where(where, x, ew.convert_element_type(fill, abstractify(x).element_type))


def _with_initial(out: Any, initial: Any, combine: Any) -> Any:
    if initial is None:
        return out
    return combine(out, ew.convert_element_type(initial, abstractify(out).element_type))


def _typed_input(name: str, a: Any, out: Any, dtype: Any, promote_integers: bool) -> Any:
    """``a`` in the type ``sum``/``prod`` reduce it in (``dtype``, else small integers widened)."""
    _no_out(name, out)
    x = _array(name, a)
    if dtype is not None:
        return ew.convert_element_type(x, element_type(dtype))
    return _promoted_integers(x) if promote_integers else x


def sum(a: Any, axis: _Axis = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = None, where: Any = None, promote_integers: bool = True) -> Any:
    x = _masked(_typed_input("sum", a, out, dtype, promote_integers), where, 0)
    return _with_initial(_core.sum(x, axis, keepdims), initial, ew.add)


def prod(a: Any, axis: _Axis = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = None, where: Any = None, promote_integers: bool = True) -> Any:
    x = _masked(_typed_input("prod", a, out, dtype, promote_integers), where, 1)
    return _with_initial(_reductions.prod(x, axis, keepdims), initial, ew.mul)


def _count(x: Any, axis: _Axis, keepdims: bool, where: Any) -> Any:
    """How many elements each reduction covers (an array if masked)."""
    if where is None:
        dims = abstractify(x).dimensions
        axes = _reductions._axes("mean", x, axis)
        return int(np.prod([dims[i] for i in axes], dtype=np.int64))
    mask = _core.broadcast_to(where, abstractify(x).dimensions)
    return _core.sum(ew.convert_element_type(mask, abstractify(x).element_type), axis, keepdims)


def _inexact(x: Any, dtype: Any) -> Any:
    if dtype is not None:
        return ew.convert_element_type(x, element_type(dtype))
    return _core._to_inexact(x)


def mean(a: Any, axis: _Axis = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         *, where: Any = None) -> Any:
    _no_out("mean", out)
    x = _inexact(_array("mean", a), dtype)
    total = _core.sum(_masked(x, where, 0), axis, keepdims)
    return _core.true_divide(total, _count(x, axis, keepdims, where))


def var(a: Any, axis: _Axis = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    _no_out("var", out)
    if correction is not None:
        ddof = correction
    x = _inexact(_array("var", a), dtype)
    if where is None:
        return _reductions.var(x, axis, ddof, keepdims)
    centre = mean(x, axis, keepdims=True, where=where)
    dev = _core.subtract(x, centre)
    if abstractify(dev).element_type.is_complex:
        dev = ew.abs(dev)
    squares = _core.sum(_masked(ew.mul(dev, dev), where, 0), axis, keepdims)
    count = _count(x, axis, keepdims, where)
    return _core.true_divide(squares, ew.max(ew.sub(count, ew.convert_element_type(
        ddof, abstractify(count).element_type)), ew.convert_element_type(
        0, abstractify(count).element_type)))


def std(a: Any, axis: _Axis = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    return ew.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def _extreme(fn: str, reduce: Any, combine: Any) -> Any:
    def extreme(a: Any, axis: _Axis = None, out: Any = None, keepdims: bool = False,
                initial: Any = None, where: Any = None) -> Any:
        _no_out(fn, out)
        x = _array(fn, a)
        if where is not None:
            if initial is None:
                raise ValueError(f"{fn}: a where mask needs an initial value (the reduction "
                                 f"has no identity)")
            x = _masked(x, where, initial)
        return _with_initial(reduce(x, axis, keepdims), initial, combine)
    extreme.__name__ = extreme.__qualname__ = fn
    extreme.__doc__ = f"NumPy's ``{fn}`` over ``axis`` (all axes if None), JAX's signature."
    return extreme


max = amax = _extreme("max", _reductions.max, ew.max)
min = amin = _extreme("min", _reductions.min, ew.min)


def _logical(fn: str, reduce: Any, fill: bool) -> Any:
    def logical(a: Any, axis: _Axis = None, out: Any = None, keepdims: bool = False, *,
                where: Any = None) -> Any:
        _no_out(fn, out)
        x = ew.convert_element_type(_array(fn, a), PT.PRED)
        return reduce(_masked(x, where, fill), axis, keepdims)
    logical.__name__ = logical.__qualname__ = fn
    return logical


any = _logical("any", _reductions.any, False)
all = _logical("all", _reductions.all, True)


def _arg(fn: str, reduce: Any) -> Any:
    def arg(a: Any, axis: int | None = None, out: Any = None, keepdims: bool | None = None
            ) -> Any:
        _no_out(fn, out)
        return reduce(_array(fn, a), axis, bool(keepdims))
    arg.__name__ = arg.__qualname__ = fn
    return arg


argmax = _arg("argmax", _reductions.argmax)
argmin = _arg("argmin", _reductions.argmin)


def _cumulative(fn: str, reduce: Any) -> Any:
    def cumulative(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> Any:
        _no_out(fn, out)
        x = _array(fn, a)
        if dtype is None and abstractify(x).element_type is PT.PRED:
            x = ew.convert_element_type(x, core.default_int())  # (other integers stay)
        return reduce(x, axis, dtype)
    cumulative.__name__ = cumulative.__qualname__ = fn
    return cumulative


cumsum = _cumulative("cumsum", _reductions.cumsum)
cumprod = _cumulative("cumprod", _reductions.cumprod)


def _method(fn: Any) -> Any:
    return lambda x: lambda *args, **kwargs: fn(x, *args, **kwargs)


core.OPERATORS.update({f"attr:{fn.__name__}": _method(fn) for fn in (
    sum, prod, mean, var, std, max, min, any, all, argmax, argmin, cumsum, cumprod)})
