"""A NumPy-style layer over the XLA op set (``import primitives.numpy as xnp``).

Functions broadcast like NumPy (by inserting ``broadcast_in_dim``), promote
element types like JAX (Python scalars are weak), and accept traced values,
NumPy arrays and Python scalars alike.  This module also defines the Python
operators and array methods of traced values (``x + 1``, ``x @ w``, ``x.T``,
``x.sum(0)``).
"""
from __future__ import annotations

import builtins
from typing import Any, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import ShapeError, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from ..dot_conv import dot_general
from ..dot_conv import dot_general as _dot_general
from .._util import is_value
from ..reductions import reduce_sum
from ..shape_ops import broadcast_in_dim, reshape as _lax_reshape, transpose as _lax_transpose

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "negative", "exp", "log",
    "tanh", "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "where", "matmul", "sum", "mean", "transpose", "reshape", "astype",
    "broadcast_to", "broadcast_shapes", "asarray", "shape", "ndim",
]


def shape(x: Any) -> tuple[int, ...]:
    return abstractify(x).dimensions


def ndim(x: Any) -> int:
    return abstractify(x).ndim


def _arraylike(x: Any) -> Any:
    """Sequences as NumPy arrays; values (Python scalars too, which stay weak) as they are."""
    return x if is_value(x) else np.asarray(x)


def asarray(x: Any, dtype: Any = None) -> Any:
    """Traced values pass through (converted if ``dtype`` is given); others become
    NumPy arrays of JAX's types (``array(x, dtype, copy=False)``: lists may
    hold traced values, 64-bit types narrow unless x64 is on)."""
    if isinstance(x, core.Tracer) and dtype is None:
        return x
    from ._creation import array
    return array(x, dtype, copy=False)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcasting of shapes; a ``ShapeError`` names the shapes that clash."""
    rank = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        sizes = {s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ShapeError("broadcast", f"shapes {', '.join(map(str, map(tuple, shapes)))} "
                                          f"cannot be broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    shape = tuple(shape)
    xs = abstractify(x).dimensions
    if xs == shape:
        return x
    if broadcast_shapes(xs, shape) != shape:
        raise ShapeError("broadcast_to", f"cannot broadcast {xs} to {shape}")
    lead = len(shape) - len(xs)
    # NumPy broadcasting may stretch size-1 dimensions: drop them first.
    keep = [i for i, d in enumerate(xs) if d == shape[lead + i]]
    if len(keep) != len(xs):
        x = _lax_reshape(x, [xs[i] for i in keep])
    return broadcast_in_dim(x, shape, [lead + i for i in keep])


def _broadcast_all(*args: Any) -> list[Any]:
    target = broadcast_shapes(*(abstractify(a).dimensions for a in args))
    return [broadcast_to(a, target) for a in args]


def _binary(lax_fn):
    def fn(x: Any, y: Any) -> Any:
        x, y = ew.promote(x, y)
        return lax_fn(*_broadcast_all(x, y))
    fn.__name__ = lax_fn.__name__
    fn.__doc__ = f"NumPy-broadcasting ``{lax_fn.__name__}``."
    return fn


add = _binary(ew.add)
subtract = _binary(ew.sub)
multiply = _binary(ew.mul)
maximum = _binary(ew.max)
minimum = _binary(ew.min)
divide = _binary(ew.div)
equal = _binary(ew.eq)
not_equal = _binary(ew.ne)
less = _binary(ew.lt)
less_equal = _binary(ew.le)
greater = _binary(ew.gt)
greater_equal = _binary(ew.ge)
negative = ew.neg


def _to_inexact(x: Any) -> Any:
    """Integers and booleans as floats, as JAX's ``to_inexact_dtype``: f32,
    except 64-bit integers (f64 with x64)."""
    t = abstractify(x).element_type
    if t.is_floating or t.is_complex:
        return x
    wide = t in (PT.S64, PT.U64) and not abstractify(x).weak_type
    return ew.convert_element_type(x, core.default_float() if wide else PT.F32)


def true_divide(x: Any, y: Any) -> Any:
    """NumPy's ``/``: integers divide as floats."""
    x, y = ew.promote(x, y)
    return divide(_to_inexact(x), _to_inexact(y))


def exp(x: Any) -> Any:
    return ew.exp(_to_inexact(x))


def log(x: Any) -> Any:
    return ew.log(_to_inexact(x))


def tanh(x: Any) -> Any:
    return ew.tanh(_to_inexact(x))


def where(condition: Any, x: Any = None, y: Any = None, *, size: int | None = None,
          fill_value: Any = None) -> Any:
    """``x`` where ``condition`` else ``y``, all three broadcast together; with
    ``condition`` alone, ``nonzero(condition, size=size, fill_value=fill_value)``."""
    if x is None and y is None:
        from ._set_ops import nonzero
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("where: either both or neither of x and y should be given")
    x, y = ew.promote(x, y)
    condition = ew.convert_element_type(condition, PT.PRED)
    condition, x, y = _broadcast_all(condition, x, y)
    return ew.select(condition, x, y)


def _axes(x: Any, axis: int | Sequence[int] | None) -> tuple[int, ...]:
    rank = abstractify(x).ndim
    if axis is None:
        return tuple(range(rank))
    return tuple(a % rank if rank else a for a in ((axis,) if isinstance(axis, int) else axis))


def sum(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False,
        dtype: Any = None) -> Any:
    if dtype is not None:
        x = ew.convert_element_type(x, dtype)
    elif abstractify(x).element_type is PT.PRED:
        x = ew.convert_element_type(x, PT.S32)
    axes = _axes(x, axis)
    out = reduce_sum(x, axes)
    if keepdims:
        dims = abstractify(x).dimensions
        out = _lax_reshape(out, [1 if i in axes else d for i, d in enumerate(dims)])
    return out


def mean(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
    x = _to_inexact(x)
    dims = abstractify(x).dimensions
    count = int(np.prod([dims[a] for a in _axes(x, axis)], dtype=np.int64))
    return true_divide(sum(x, axis, keepdims), count)


def matmul(a: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """NumPy's ``@``: 1-D operands are promoted to matrices; leading
    dimensions are batch dimensions and broadcast.  ``precision`` is accepted
    (NumPy's results do not depend on it); ``preferred_element_type`` is the
    result type."""
    def dot_general(x: Any, y: Any, dims: Any) -> Any:
        return _dot_general(x, y, dims, preferred_element_type=preferred_element_type)
    a, b = ew.promote(a, b)
    ra, rb = abstractify(a).ndim, abstractify(b).ndim
    if ra == 0 or rb == 0:
        raise ShapeError("matmul", "operands must have rank >= 1",
                         abstractify(a), abstractify(b))
    if ra == 1 and rb == 1:
        return dot_general(a, b, (((0,), (0,)), ((), ())))
    if rb == 1:
        return dot_general(a, b, (((ra - 1,), (0,)), ((), ())))
    if ra == 1:
        return dot_general(a, b, (((0,), (rb - 2,)), ((), ())))
    sa, sb = abstractify(a).dimensions, abstractify(b).dimensions
    batch = broadcast_shapes(sa[:-2], sb[:-2])
    a = broadcast_to(a, batch + sa[-2:])
    b = broadcast_to(b, batch + sb[-2:])
    nb = len(batch)
    return dot_general(a, b, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


def transpose(x: Any, axes: Sequence[int] | None = None) -> Any:
    rank = abstractify(x).ndim
    return _lax_transpose(x, tuple(reversed(range(rank))) if axes is None else axes)


def reshape(x: Any, *new_shape: Any) -> Any:
    if len(new_shape) == 1 and not isinstance(new_shape[0], int):
        new_shape = tuple(new_shape[0])
    return _lax_reshape(x, new_shape)


def astype(x: Any, dtype: Any, copy: bool = False, device: Any = None) -> Any:
    """``x`` converted to ``dtype`` (64-bit types narrow unless x64 is on)."""
    return ew.convert_element_type(x, dtype)


# --------------------------------------------------------------------------
# operators and methods of traced values
# --------------------------------------------------------------------------

def _swap(fn):
    return lambda self, other: fn(other, self)


core.OPERATORS.update({
    "__add__": add, "__radd__": _swap(add),
    "__sub__": subtract, "__rsub__": _swap(subtract),
    "__mul__": multiply, "__rmul__": _swap(multiply),
    "__truediv__": true_divide, "__rtruediv__": _swap(true_divide),
    "__matmul__": matmul, "__rmatmul__": _swap(matmul),
    "__neg__": negative, "__pos__": lambda x: x,
    "__eq__": equal, "__ne__": not_equal,
    "__lt__": less, "__le__": less_equal, "__gt__": greater, "__ge__": greater_equal,
    "attr:T": lambda x: transpose(x),
    "attr:reshape": lambda x: lambda *shape: reshape(x, *shape),
    "attr:astype": lambda x: lambda dtype, copy=False, device=None: astype(x, dtype),
    "attr:itemsize": lambda x: abstractify(x).dtype.itemsize,
    "attr:nbytes": lambda x: abstractify(x).dtype.itemsize * abstractify(x).size,
    "attr:transpose": lambda x: lambda *axes: transpose(x, axes[0] if len(axes) == 1 and
                                                        not isinstance(axes[0], int)
                                                        else (axes or None)),
})
