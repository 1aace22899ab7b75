"""NumPy-style layer: choosing, mapping and placing.

``select``, ``choose``, ``piecewise`` (every branch computed, then
selected, as ``jax.numpy`` does under ``jit``), ``vectorize``,
``apply_along_axis`` and ``apply_over_axes`` (on ``vmap``), functional
forms of NumPy's in-place writers (``put``, ``place``, ``put_along_axis``,
``fill_diagonal``: JAX's ``inplace=False``), index arithmetic
(``ravel_multi_index``, ``unravel_index``), bit packing, and the
sort-based ``lexsort``, ``partition``, ``argpartition``, ``sort_complex``.
"""
from __future__ import annotations

import builtins
import re
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import Tracer, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from .. import sorting
from ._core import _arraylike, _broadcast_all, _to_inexact, broadcast_shapes, broadcast_to, \
    reshape, sum as _sum, where
from ._gather_indexing import take, take_along_axis
from ._indexing import _axis, moveaxis, ravel, stack
from ._reductions import argsort, sort
from ._reductions import any as _any
from ._reductions import cumsum
from .._util import dims as _dims, element_type as _type

__all__ = [
    "select", "choose", "piecewise", "vectorize", "apply_along_axis", "apply_over_axes", "put",
    "place", "put_along_axis", "fill_diagonal", "ravel_multi_index", "unravel_index",
    "packbits", "unpackbits", "lexsort", "partition", "argpartition", "sort_complex",
]




def _wrap(index: Any, n: int) -> Any:
    """``index`` modulo ``n`` (non-negative)."""
    size = ew.convert_element_type(n, _type(index))
    return ew.rem(ew.add(ew.rem(index, size), size), size)


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """The choice of the first true condition, element-wise (``default`` if none)."""
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist and choicelist must have the same length")
    if not condlist:
        raise ValueError("select: condlist must be non-empty")
    choices = ew.promote(*(_arraylike(c) for c in choicelist), _arraylike(default))
    out = choices[-1]
    for cond, choice in zip(reversed(condlist), reversed(choices[:-1])):
        out = where(cond, choice, out)
    return out


def choose(a: Any, choices: Sequence[Any], out: Any = None, mode: str = "raise") -> Any:
    """``choices[a[i]][i]`` element-wise (everything broadcast); ``mode``: "raise"
    (concrete indices are checked; traced ones clamp), "wrap", "clip"."""
    if out is not None:
        raise NotImplementedError("choose: the out argument is not supported")
    a = _arraylike(a)
    n = len(choices)
    if mode == "raise" and not isinstance(a, Tracer):
        values = np.asarray(a)
        if values.size and (values.min() < 0 or values.max() >= n):
            raise ValueError("choose: invalid entry in choice array")
    elif mode == "wrap":
        a = _wrap(a, n)
    elif mode not in ("raise", "clip"):
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    a = ew.clamp(ew.convert_element_type(0, _type(a)), a, ew.convert_element_type(n - 1, _type(a)))
    arrays = ew.promote(*(_arraylike(c) for c in choices))
    shape = broadcast_shapes(_dims(a), *(_dims(c) for c in arrays))
    stacked = stack([broadcast_to(c, shape) for c in arrays], 0)
    index = reshape(broadcast_to(a, shape), (1,) + shape)
    return reshape(take_along_axis(stacked, index, 0), shape)


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """NumPy's ``piecewise``: ``funclist[i](x)`` (or the constant) where
    ``condlist[i]``; one more entry in ``funclist`` covers the rest."""
    x = _arraylike(x)
    conds = list(condlist) if isinstance(condlist, (list, tuple)) else \
        [condlist] if abstractify(condlist).ndim == abstractify(x).ndim else list(condlist)
    if len(funclist) not in (len(conds), len(conds) + 1):
        raise ValueError(f"piecewise: with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    if len(funclist) == len(conds) + 1:
        conds.append(ew.not_(_any(stack([broadcast_to(_arraylike(c), _dims(x)) for c in conds], 0),
                                  0)) if conds else ew.eq(x, x))
    out = ew.convert_element_type(broadcast_to(0, _dims(x)), _type(x))
    for cond, fn in zip(conds, funclist):
        value = fn(x, *args, **kw) if callable(fn) else fn
        out = where(cond, ew.convert_element_type(_arraylike(value), _type(x)), out)
    return out


# -- vmap-based mapping --------------------------------------------------------------------------

def _vmap(fn: Callable[..., Any], in_axes: Any = 0) -> Callable[..., Any]:
    from numxla.autodiff import vmap  # autodiff builds on this package: import when called
    return vmap(fn, in_axes)


_DIMS = re.compile(r"\(([^()]*)\)")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    inputs, arrow, outputs = signature.replace(" ", "").partition("->")
    if not arrow:
        raise ValueError(f"vectorize: invalid signature {signature!r}")
    parse = lambda text: [tuple(d for d in g.split(",") if d) for g in _DIMS.findall(text)]  # noqa
    return parse(inputs), parse(outputs)


class vectorize:
    """JAX's ``vectorize``: ``pyfunc`` mapped (with ``vmap``) over the broadcast
    loop dimensions of its arguments; ``signature`` ("(n),(n)->()") names the
    core dimensions ``pyfunc`` sees; ``excluded`` arguments pass through."""

    def __init__(self, pyfunc: Callable[..., Any], *, excluded: Any = frozenset(),
                 signature: str | None = None):
        self.pyfunc = pyfunc
        self.excluded = set(excluded)
        self.signature = signature
        self.__doc__ = getattr(pyfunc, "__doc__", None)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fixed = {i: a for i, a in enumerate(args) if i in self.excluded}
        mapped = [_arraylike(a) for i, a in enumerate(args) if i not in self.excluded]

        def call(*xs: Any) -> Any:
            it = iter(xs)
            full = [fixed[i] if i in fixed else next(it) for i in range(len(args))]
            return self.pyfunc(*full, **kwargs)

        if self.signature is None:
            core = [()] * len(mapped)
        else:
            core, _ = _parse_signature(self.signature)
            if len(core) != len(mapped):
                raise TypeError(f"vectorize: signature {self.signature!r} has {len(core)} "
                                f"inputs, got {len(mapped)} arguments")
        core_ranks = [len(c) for c in core]
        loops = [_dims(x)[:len(_dims(x)) - r] for x, r in zip(mapped, core_ranks)]
        loop = broadcast_shapes(*loops) if loops else ()
        flat = []
        for x, r in zip(mapped, core_ranks):
            core_shape = _dims(x)[len(_dims(x)) - r:]
            flat.append(reshape(broadcast_to(x, loop + core_shape), (-1,) + core_shape))
        if not loop:
            return call(*mapped)
        out = _vmap(call)(*flat) if flat else call()
        from numxla.tracer import pytree
        return pytree.tree_map(lambda y: reshape(y, loop + _dims(y)[1:]), out)


def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """``func1d`` on every 1-D slice along ``axis`` (with ``vmap``); the result's
    own dimensions replace ``axis``."""
    arr = _arraylike(arr)
    rank = abstractify(arr).ndim
    axis = _axis("apply_along_axis", axis, rank)
    moved = moveaxis(arr, axis, -1)
    others = _dims(moved)[:-1]
    flat = reshape(moved, (-1, _dims(moved)[-1]))
    out = _vmap(lambda row: _arraylike(func1d(row, *args, **kwargs)))(flat)
    res_dims = _dims(out)[1:]
    out = reshape(out, others + res_dims)
    return moveaxis(out, tuple(range(len(others), len(others) + len(res_dims))),
                    tuple(range(axis, axis + len(res_dims)))) if res_dims else out


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Sequence[int]) -> Any:
    """``func(a, axis)`` for each axis in turn, keeping the reduced axes as 1s."""
    a = _arraylike(a)
    for axis in ([axes] if isinstance(axes, (int, np.integer)) else axes):
        res = _arraylike(func(a, axis))
        if abstractify(res).ndim != abstractify(a).ndim:
            res = lax.expand_dims(res, (_axis("apply_over_axes", axis, abstractify(a).ndim),))
        a = res
    return a


# -- functional in-place writers -----------------------------------------------------------------

def _no_inplace(name: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"{name}: numxla arrays are immutable; pass inplace=False to get the "
                         f"updated array back (as in JAX)")


def _cycled(values: Any, n: int, t: PT) -> Any:
    """The flattened ``values`` repeated to ``n`` entries, as NumPy's writers do."""
    v = ravel(ew.convert_element_type(_arraylike(values), t))
    m = _dims(v)[0]
    if m == n:
        return v
    return take(v, np.arange(n) % builtins.max(m, 1), axis=0)


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """``a`` with ``a.flat[ind] = v`` (``v`` cycled); ``mode`` as ``take``'s."""
    _no_inplace("put", inplace)
    a = _arraylike(a)
    flat = ravel(a)
    ind = ravel(_arraylike(ind))
    n = _dims(flat)[0]
    if mode == "wrap":
        ind = _wrap(ind, n)
    elif mode == "clip":
        ind = ew.clamp(ew.convert_element_type(0, _type(ind)), ind,
                       ew.convert_element_type(n - 1, _type(ind)))
    values = _cycled(v, _dims(ind)[0], _type(a))
    return reshape(_at(flat)[ind].set(values), _dims(a))


def _at(x: Any) -> Any:
    """``x.at``, for eager NumPy values too."""
    from ._gather_indexing import _IndexUpdateHelper
    return _IndexUpdateHelper(x)


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """``arr`` with the masked entries set to ``vals`` in order (cycled)."""
    _no_inplace("place", inplace)
    arr = _arraylike(arr)
    mask = broadcast_to(ew.convert_element_type(_arraylike(mask), PT.PRED), _dims(arr))
    flat_mask = ravel(mask)
    vals = ravel(ew.convert_element_type(_arraylike(vals), _type(arr)))
    m = _dims(vals)[0]
    if m == 0:
        return arr
    position = ew.sub(cumsum(flat_mask), np.int32(1))
    position = ew.rem(ew.max(position, np.int32(0)), np.int32(m))
    placed = take(vals, position, axis=0, mode="clip")
    return reshape(where(flat_mask, placed, ravel(arr)), _dims(arr))


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None, inplace: bool = True,
                   *, mode: str | None = None) -> Any:
    """``arr`` with ``arr[..., indices, ...] = values`` along ``axis`` (the other
    dimensions broadcast, as ``take_along_axis``)."""
    _no_inplace("put_along_axis", inplace)
    arr = _arraylike(arr)
    if axis is None:
        return reshape(put_along_axis(ravel(arr), ravel(_arraylike(indices)), values, 0, False,
                                      mode=mode), _dims(arr))
    rank = abstractify(arr).ndim
    axis = _axis("put_along_axis", axis, rank)
    indices = _arraylike(indices)
    shape = list(broadcast_shapes(*(tuple(d for i, d in enumerate(s) if i != axis)
                                    for s in (_dims(arr), _dims(indices)))))
    shape.insert(axis, _dims(indices)[axis])
    index = []
    for d in range(rank):
        if d == axis:
            index.append(broadcast_to(indices, tuple(shape)))
        else:
            index.append(lax.broadcasted_iota(PT.S32, tuple(shape), d))
    values = broadcast_to(ew.convert_element_type(_arraylike(values), _type(arr)), tuple(shape))
    return _at(arr)[tuple(index)].set(values, mode=mode)


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """``a`` with its main diagonal set to ``val`` (cycled); every dimension of an
    n-d ``a`` must be equal, a 2-d one may be tall."""
    _no_inplace("fill_diagonal", inplace)
    a = _arraylike(a)
    dims = _dims(a)
    if len(dims) < 2:
        raise ValueError("fill_diagonal: array must be at least 2-d")
    if len(dims) > 2 and len(set(dims)) != 1:
        raise ValueError("fill_diagonal: all dimensions of input must be of equal length")
    n = builtins.min(dims)
    if wrap and len(dims) == 2 and dims[0] > dims[1]:
        raise NotImplementedError("fill_diagonal: wrap=True is not supported")
    idx = np.arange(n, dtype=np.int32)
    values = _cycled(val, n, _type(a))
    return _at(a)[(idx,) * len(dims)].set(values)


# -- index arithmetic and bits -----------------------------------------------------------------

def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C") -> Any:
    """Flat indices of index tuples into an array of shape ``dims``; ``mode``:
    "raise" (concrete indices checked), "wrap" or "clip"."""
    if len(multi_index) != len(dims):
        raise ValueError("ravel_multi_index: multi_index must have one entry per dimension")
    strides = np.cumprod((1,) + tuple(dims[::-1]))[-2::-1] if order == "C" else \
        np.cumprod((1,) + tuple(dims))[:-1]
    out = None
    for idx, size, stride in zip(multi_index, dims, strides):
        idx = _arraylike(idx)
        if mode == "raise" and not isinstance(idx, Tracer):
            values = np.asarray(idx)
            if values.size and (values.min() < 0 or values.max() >= size):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
        elif mode == "wrap":
            idx = _wrap(idx, size)
        else:
            idx = ew.clamp(ew.convert_element_type(0, _type(idx)), idx,
                           ew.convert_element_type(size - 1, _type(idx)))
        term = ew.mul(idx, ew.convert_element_type(int(stride), _type(idx)))
        out = term if out is None else ew.add(*_broadcast_all(*ew.promote(out, term)))
    return out


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """The coordinates of flat ``indices`` in an array of ``shape`` (negative
    indices count from the end; traced out-of-range indices clamp)."""
    indices = _arraylike(indices)
    size = int(np.prod(shape, dtype=np.int64))
    t = _type(indices)
    if not isinstance(indices, Tracer):
        values = np.asarray(indices)
        if values.size and (values.min() < -size or values.max() >= size):
            raise ValueError("unravel_index: index out of bounds")
    indices = where(ew.lt(indices, ew.convert_element_type(0, t)),
                    ew.add(indices, ew.convert_element_type(size, t)), indices)
    indices = ew.clamp(ew.convert_element_type(0, t), indices,
                       ew.convert_element_type(builtins.max(size - 1, 0), t))
    out = []
    for stride, dim in zip(np.cumprod((1,) + tuple(shape[::-1]))[-2::-1], shape):
        q = ew.div(indices, ew.convert_element_type(int(stride), t))
        out.append(ew.rem(q, ew.convert_element_type(builtins.max(int(dim), 1), t)))
    return tuple(out)


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Nonzero elements as bits, 8 to a u8 along ``axis`` (flattened if None;
    the last byte zero-padded)."""
    a = _arraylike(a)
    if axis is None:
        a, axis = ravel(a), 0
    rank = abstractify(a).ndim
    axis = _axis("packbits", axis, rank)
    bits = ew.convert_element_type(ew.ne(a, ew.convert_element_type(0, _type(a))), PT.U8)
    n = _dims(bits)[axis]
    pad = -n % 8
    if pad:
        config = [(0, 0, 0)] * rank
        config[axis] = (0, pad, 0)
        bits = lax.pad(bits, np.uint8(0), config)
    dims = _dims(bits)
    grouped = reshape(bits, dims[:axis] + ((n + pad) // 8, 8) + dims[axis + 1:])
    weights = (1 << np.arange(8)[::-1] if bitorder == "big" else 1 << np.arange(8)).astype(np.uint8)
    weights = weights.reshape((8,) + (1,) * (rank - axis - 1))
    return _sum(ew.mul(*_broadcast_all(grouped, weights)), axis + 1, dtype=PT.U8)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The bits of u8 elements along ``axis`` (flattened if None), 8 per byte."""
    a = _arraylike(a)
    if _type(a) is not PT.U8:
        raise TypeError("unpackbits: expected an input array of unsigned byte data type")
    if axis is None:
        a, axis = ravel(a), 0
    rank = abstractify(a).ndim
    axis = _axis("unpackbits", axis, rank)
    shifts = (np.arange(8)[::-1] if bitorder == "big" else np.arange(8)).astype(np.uint8)
    shifts = shifts.reshape((8,) + (1,) * (rank - axis - 1))
    expanded = lax.expand_dims(a, (axis + 1,))
    bits = ew.bitwise_and(ew.shift_right_logical(*_broadcast_all(expanded, shifts)), np.uint8(1))
    dims = _dims(bits)
    out = reshape(bits, dims[:axis] + (dims[axis] * 8,) + dims[axis + 2:])
    if count is not None:
        out = lax.slice_in_dim(out, 0, builtins.min(count, _dims(out)[axis]), 1, axis)
    return out


# -- sort-based --------------------------------------------------------------------------------

def lexsort(keys: Sequence[Any], axis: int = -1) -> Any:
    """The s32 indices sorting by the last key, then the one before... (stable)."""
    keys = [_arraylike(k) for k in keys]
    if not keys:
        raise TypeError("lexsort: need at least one key")
    shape = broadcast_shapes(*(_dims(k) for k in keys))
    keys = [broadcast_to(k, shape) for k in keys]
    axis = _axis("lexsort", axis, len(shape))
    iota = lax.broadcasted_iota(PT.S32, shape, axis)
    out = sorting.sort(tuple(reversed(keys)) + (iota,), dimension=axis, is_stable=True,
                       num_keys=len(keys))
    return out[-1]


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """A partition around ``kth``: here the sorted array (which is one)."""
    return sort(a, axis)


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """Indices that partition around ``kth``: here those that sort."""
    return argsort(a, axis)


def sort_complex(a: Any) -> Any:
    """Sorted by real part, then imaginary part, as a complex array."""
    a = _to_inexact(_arraylike(a))
    if not _type(a).is_complex:
        a = ew.convert_element_type(a, PT.C128 if _type(a) is PT.F64 else PT.C64)
    return sort(a, -1)


# -- array methods of traced values -------------------------------------------------------------

core.OPERATORS.update({
    "attr:choose": lambda x: lambda choices, out=None, mode="raise": choose(x, choices, out, mode),
    "attr:argpartition": lambda x: lambda kth, axis=-1: argpartition(x, kth, axis),
})
