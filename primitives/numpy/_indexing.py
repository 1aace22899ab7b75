"""NumPy-style indexing, joining, splitting and array creation.

Everything is built from the shape ops: ``x[1:, ::-1, None]`` is a
``slice``, a ``rev`` and a ``reshape``; an index that is a traced integer
scalar is a ``dynamic_slice`` (clamped into range, as in JAX); indices with
integer or boolean arrays (advanced indexing) go whole to
``primitives.numpy._gather_indexing.advanced_getitem``.  Creation functions
(``zeros``, ``full``, ``eye``, ``arange``) broadcast a scalar or use ``iota``
rather than embedding a constant array.
"""
from __future__ import annotations

import builtins
import importlib
import math
import operator
from typing import Any, Sequence

import numpy as np

from numxla.tracer import core
from numxla.tracer.core import ShapeError, Tracer, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from .._util import is_value
from ..dtypes import canonical_type, result_type
from ._core import broadcast_to
from .._util import dims as _dims

__all__ = [
    "getitem", "concatenate", "stack", "hstack", "vstack", "atleast_1d", "atleast_2d",
    "split", "squeeze", "expand_dims", "flip", "swapaxes", "moveaxis", "ravel", "roll",
    "tile", "repeat", "pad", "zeros", "ones", "full", "zeros_like", "ones_like", "full_like",
    "arange", "linspace", "eye", "identity",
]


# -- helpers -----------------------------------------------------------------------

def _axis(fn: str, axis: int, rank: int) -> int:
    """A NumPy axis (negative counts from the end), range-checked."""
    axis = operator.index(axis)
    if not -rank <= axis < rank:
        raise ShapeError(fn, f"axis {axis} is out of bounds for an array of rank {rank}")
    return axis % rank


def _axes(fn: str, axis: int | Sequence[int], rank: int) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(_axis(fn, a, rank) for a in axes)
    if len(set(out)) != len(out):
        raise ShapeError(fn, f"axis {tuple(axes)} contains a repeated axis")
    return out



def _constant(value: Any, element_type: PT) -> Any:
    """``value`` (a scalar or array, concrete or traced) as ``element_type``."""
    if isinstance(value, Tracer) or hasattr(value, "__numxla_aval__"):  # e.g. bf16 arrays
        return ew.convert_element_type(value, element_type)
    if element_type is PT.BF16:  # bf16 words come from a convert (also while tracing)
        return ew.convert_element_type(np.asarray(value, dtype=np.float32), element_type)
    with np.errstate(all="ignore"):
        return np.asarray(value).astype(element_type.numpy_dtype)


def _default_type(value: Any) -> PT:
    """The element type NumPy/JAX give a fill value (Python floats are f32)."""
    t, _weak = result_type(value)
    return t


# -- indexing ----------------------------------------------------------------------

def _is_traced_int(item: Any) -> bool:
    return isinstance(item, Tracer) and item.aval.ndim == 0 and item.aval.element_type.is_integral


def _is_advanced(item: Any) -> bool:
    """Integer or boolean arrays (and Python bools): NumPy's advanced indexing."""
    if isinstance(item, (bool, np.bool_, list)):
        return True
    if isinstance(item, np.ndarray):
        return item.ndim > 0 or item.dtype == np.bool_
    return isinstance(item, Tracer) and not _is_traced_int(item)


def _basic_item(item: Any) -> Any:
    """A basic index entry: ``slice``, ``None``, ``Ellipsis``, an int or a traced int."""
    if item is None or item is Ellipsis or isinstance(item, builtins.slice) or \
            _is_traced_int(item):
        return item
    if isinstance(item, np.ndarray) and item.dtype.kind in "iu":  # 0-d: an integer
        return int(item)
    try:
        return operator.index(item)
    except TypeError:
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                         f"and integer or boolean arrays are valid indices, got {item!r}"
                         ) from None


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` with NumPy's basic indexing (ints, slices with any step,
    ``None``, ``...``); traced integer scalars index dynamically (clamped);
    array indices are delegated to the gather-based advanced indexing."""
    items = index if isinstance(index, tuple) else (index,)
    if builtins.any(_is_advanced(i) for i in items):
        gather = importlib.import_module("numxla.primitives.numpy._gather_indexing")
        return gather.advanced_getitem(x, index)
    items = tuple(_basic_item(i) for i in items)
    dims = _dims(x)
    rank = len(dims)
    ellipses = [k for k, i in enumerate(items) if i is Ellipsis]  # (tracers overload ==)
    if len(ellipses) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for i in items if i is not None and i is not Ellipsis)
    if used > rank:
        raise IndexError(f"too many indices for array: array is {rank}-dimensional, but "
                         f"{used} were indexed")
    fill = (builtins.slice(None),) * (rank - used)
    if ellipses:
        items = items[:ellipses[0]] + fill + items[ellipses[0] + 1:]
    else:
        items = items + fill

    starts, limits, strides = [0] * rank, list(dims), [1] * rank
    reversed_dims: list[int] = []
    dynamic: dict[int, Any] = {}
    out_shape: list[int] = []
    d = 0
    for item in items:
        if item is None:
            out_shape.append(1)
            continue
        size = dims[d]
        if isinstance(item, builtins.slice):
            if builtins.any(isinstance(b, Tracer) for b in (item.start, item.stop, item.step)):
                raise IndexError("array slice bounds must be static (Python ints) to index "
                                 "with ':' under a trace; use lax.dynamic_slice (fixed size, "
                                 "traced start) or mark the bound static")
            start, stop, step = item.indices(size)
            n = len(range(start, stop, step))
            if n == 0:
                starts[d] = limits[d] = 0
            elif step > 0:
                starts[d], limits[d], strides[d] = start, start + (n - 1) * step + 1, step
            else:  # the same elements taken forwards, then reversed
                starts[d], limits[d], strides[d] = start + (n - 1) * step, start + 1, -step
                reversed_dims.append(d)
            out_shape.append(n)
        elif isinstance(item, Tracer):
            dynamic[d] = item
        else:
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for axis {d} with size {size}")
            starts[d], limits[d] = item % size, item % size + 1
        d += 1
    y = lax.rev(lax.slice(x, starts, limits, strides), reversed_dims)
    if dynamic:
        begin: list[Any] = [0] * rank
        sizes = list(_dims(y))
        for d, i in dynamic.items():
            if i.aval.element_type.is_signed:  # negative indices count from the end
                i = ew.select(ew.lt(i, 0), ew.add(i, dims[d]), i)
            begin[d], sizes[d] = i, 1
        y = lax.dynamic_slice(y, begin, sizes, allow_negative_indices=False)  # wrapped once
    return lax.reshape(y, out_shape)


# -- joining and splitting ---------------------------------------------------------

def _join_keys(fn: str, arrays: Sequence[Any], axis: Any, new_axis: bool) -> Any:
    """``stack``/``concatenate`` of typed PRNG key arrays (``random.key``,
    which expose ``__numxla_key_data__``): the op on their raw data, whose
    trailing axis the key axes come before, wrapped as keys again."""
    if not builtins.all(hasattr(a, "__numxla_key_data__") for a in arrays) or axis is None:
        raise TypeError(f"{fn}: typed PRNG key arrays join only with key arrays, along an axis")
    rank = len(arrays[0].shape) + new_axis
    join = stack if new_axis else concatenate
    data = join([a.__numxla_key_data__() for a in arrays], _axis(fn, axis, rank))
    return type(arrays[0])(data)


def concatenate(arrays: Sequence[Any], axis: int | None = 0, dtype: Any = None) -> Any:
    """Join arrays along ``axis`` (``None``: flattened); element types are promoted."""
    if builtins.any(hasattr(a, "__numxla_key_data__") for a in arrays):
        return _join_keys("concatenate", arrays, axis, new_axis=False)
    arrays = [a if is_value(a) else np.asarray(a) for a in arrays]  # lists, tuples
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    arrays = ew.promote(*arrays)
    if dtype is not None:
        arrays = [ew.convert_element_type(a, dtype) for a in arrays]
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    rank = abstractify(arrays[0]).ndim
    if rank == 0:
        raise ShapeError("concatenate", "zero-dimensional arrays cannot be concatenated")
    return lax.concatenate(arrays, _axis("concatenate", axis, rank))


def stack(arrays: Sequence[Any], axis: int = 0, dtype: Any = None) -> Any:
    """Join same-shaped arrays along a new ``axis``."""
    if builtins.any(hasattr(a, "__numxla_key_data__") for a in arrays):
        return _join_keys("stack", arrays, axis, new_axis=True)
    arrays = [a if is_value(a) else np.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {_dims(a) for a in arrays}
    if len(shapes) != 1:
        raise ShapeError("stack", f"all input arrays must have the same shape, got "
                                  f"{', '.join(map(str, map(_dims, arrays)))}")
    axis = _axis("stack", axis, len(_dims(arrays[0])) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype)


def atleast_1d(*arys: Any) -> Any:
    """Each argument with at least one dimension (a list if there are several)."""
    out = [lax.reshape(x, (1,)) if abstractify(x).ndim == 0 else x
           for x in (a if is_value(a) else np.asarray(a) for a in arys)]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys: Any) -> Any:
    """Each argument with at least two dimensions: (N,) becomes (1, N)."""
    out = []
    for x in (a if is_value(a) else np.asarray(a) for a in arys):
        rank = abstractify(x).ndim
        out.append(lax.reshape(x, (1,) * (2 - rank) + _dims(x)) if rank < 2 else x)
    return out[0] if len(out) == 1 else out


def vstack(arrays: Sequence[Any]) -> Any:
    return concatenate([atleast_2d(a) for a in arrays], 0)


def hstack(arrays: Sequence[Any]) -> Any:
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if abstractify(arrays[0]).ndim == 1 else 1)


def split(ary: Any, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """Split into equal sections, or at the given indices, along ``axis``."""
    dims = _dims(ary)
    axis = _axis("split", axis, len(dims))
    size = dims[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or size % sections:
            raise ShapeError("split", f"array split does not result in an equal division: "
                                      f"{size} into {sections}")
        bounds = [i * (size // sections) for i in range(sections + 1)]
    else:
        bounds = [0] + [operator.index(i) for i in indices_or_sections] + [size]
    pieces = [builtins.slice(lo, hi).indices(size)[:2] for lo, hi in zip(bounds[:-1], bounds[1:])]
    return [lax.slice_in_dim(ary, lo, builtins.max(lo, hi), 1, axis) for lo, hi in pieces]


# -- rearranging -------------------------------------------------------------------

def squeeze(a: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Remove size-1 axes (all of them, or those in ``axis``)."""
    dims = _dims(a)
    axes = tuple(i for i, n in enumerate(dims) if n == 1) if axis is None else \
        _axes("squeeze", axis, len(dims))
    return lax.squeeze(a, axes)


def expand_dims(a: Any, axis: int | Sequence[int]) -> Any:
    """Insert size-1 axes at ``axis`` (positions in the result)."""
    n = 1 if isinstance(axis, (int, np.integer)) else len(tuple(axis))
    return lax.expand_dims(a, _axes("expand_dims", axis, abstractify(a).ndim + n))


def flip(m: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Reverse the order of elements along ``axis`` (all axes if ``None``)."""
    rank = abstractify(m).ndim
    return lax.rev(m, tuple(range(rank)) if axis is None else _axes("flip", axis, rank))


def swapaxes(a: Any, axis1: int, axis2: int) -> Any:
    rank = abstractify(a).ndim
    perm = list(range(rank))
    i, j = _axis("swapaxes", axis1, rank), _axis("swapaxes", axis2, rank)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """Move axes ``source`` to positions ``destination``; the others keep their order."""
    rank = abstractify(a).ndim
    src, dst = _axes("moveaxis", source, rank), _axes("moveaxis", destination, rank)
    if len(src) != len(dst):
        raise ShapeError("moveaxis", "source and destination must have the same number of "
                                     "elements")
    order = [i for i in range(rank) if i not in src]
    for s, t in sorted(zip(dst, src)):
        order.insert(s, t)
    return lax.transpose(a, order)


def ravel(a: Any) -> Any:
    """The row-major (C-order) flattening."""
    return lax.reshape(a, (-1,))


def roll(a: Any, shift: Any, axis: int | Sequence[int] | None = None) -> Any:
    """Shift elements along ``axis`` cyclically (flattened if ``axis`` is
    ``None``).  A shift may be traced: the array is then doubled along the axis
    and a ``dynamic_slice`` of its length taken from the shifted start."""
    if axis is None:
        return lax.reshape(roll(ravel(a), shift, 0), _dims(a))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    if isinstance(shift, (tuple, list)):
        shifts = tuple(shift)
    elif abstractify(shift).ndim == 0:
        shifts = (shift,) * len(axes)
    else:
        shifts = tuple(shift[i] for i in range(_dims(shift)[0]))
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    for ax, s in zip(axes, shifts):
        ax = _axis("roll", ax, abstractify(a).ndim)
        n = _dims(a)[ax]
        if n == 0:
            continue
        if isinstance(s, Tracer):
            n32 = np.int32(n)
            s = ew.convert_element_type(s, PT.S32)
            start = ew.sub(n32, ew.rem(ew.add(ew.rem(s, n32), n32), n32))
            a = lax.dynamic_slice_in_dim(lax.concatenate([a, a], ax), start, n, ax)
            continue
        s = int(s) % n
        if s:
            a = lax.concatenate([lax.slice_in_dim(a, n - s, n, 1, ax),
                                 lax.slice_in_dim(a, 0, n - s, 1, ax)], ax)
    return a


def tile(A: Any, reps: int | Sequence[int]) -> Any:
    """Repeat the whole array ``reps`` times along each axis."""
    reps = (operator.index(reps),) if isinstance(reps, (int, np.integer)) else \
        tuple(operator.index(r) for r in reps)
    dims = _dims(A)
    rank = builtins.max(len(dims), len(reps))
    dims = (1,) * (rank - len(dims)) + dims
    reps = (1,) * (rank - len(reps)) + reps
    A = lax.reshape(A, dims)
    spread = [n for pair in zip(reps, dims) for n in pair]
    out = lax.broadcast_in_dim(A, spread, tuple(range(1, 2 * rank, 2)))
    return lax.reshape(out, [r * n for r, n in zip(reps, dims)])


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """Repeat each element ``repeats`` times along ``axis`` (flattened if
    ``None``); ``repeats`` may be one count per element (concrete, or traced
    with a static ``total_repeat_length``, as JAX requires)."""
    if axis is None:
        a, axis = ravel(a), 0
    dims = _dims(a)
    axis = _axis("repeat", axis, len(dims))
    if not isinstance(repeats, (int, np.integer)):
        if isinstance(repeats, Tracer) or (hasattr(repeats, "__numxla_aval__") and
                                           total_repeat_length is not None):
            return _repeat_each(a, repeats, axis, total_repeat_length)
        reps = np.asarray(repeats)
        if reps.size != 1:
            from ._gather_indexing import take
            index = np.repeat(np.arange(dims[axis]), np.broadcast_to(reps, (dims[axis],)))
            if total_repeat_length is not None:
                index = np.resize(index, total_repeat_length) if index.size else index
            return take(a, index.astype(np.int32), axis)
        repeats = int(reps.reshape(()))
    spread = dims[:axis + 1] + (int(repeats),) + dims[axis + 1:]
    keep = tuple(i for i in range(len(spread)) if i != axis + 1)
    out = lax.broadcast_in_dim(a, spread, keep)
    return lax.reshape(out, dims[:axis] + (dims[axis] * int(repeats),) + dims[axis + 1:])


def _repeat_each(a: Any, repeats: Any, axis: int, total: int | None) -> Any:
    """``repeat`` with traced per-element counts: output position ``j`` reads
    the element whose running count first exceeds ``j``."""
    if total is None:
        raise ValueError("repeat: traced repeats need a static total_repeat_length (as in JAX)")
    from ._gather_indexing import take
    from ._histograms import searchsorted
    from ._reductions import cumsum
    n = _dims(a)[axis]
    ends = cumsum(broadcast_to(repeats, (n,)))
    index = searchsorted(ends, arange(total, dtype=np.int32), side="right")
    return take(a, ew.min(index, ew.convert_element_type(n - 1, abstractify(index).element_type)),
                axis)


_INDEX_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


def pad(array: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0,
        **kwargs: Any) -> Any:
    """NumPy's ``pad``: ``pad_width`` is an int, a ``(before, after)`` pair,
    or one pair per axis.  ``mode`` "constant" (``constant_values`` likewise;
    scalars may be traced; "empty" pads with zeros), or "edge", "reflect",
    "symmetric", "wrap", which read existing elements (a gather per axis)."""
    rank = abstractify(array).ndim
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (rank, 2))
    if (widths < 0).any():
        raise ShapeError("pad", f"pad_width {pad_width} contains negative values")
    if mode in _INDEX_PAD_MODES:
        if kwargs.get("reflect_type", "even") != "even":
            raise NotImplementedError("pad: reflect_type='odd' is not supported")
        from ._gather_indexing import take
        dims = _dims(array)
        for ax, (lo, hi) in enumerate(widths):
            if lo or hi:
                index = np.pad(np.arange(dims[ax]), (int(lo), int(hi)), mode=mode)
                array = take(array, index.astype(np.int32), ax)
        return array
    if mode == "empty":
        constant_values = 0
    elif mode != "constant":
        raise NotImplementedError(f"pad mode {mode!r}: supported are 'constant', 'empty', "
                                  f"{', '.join(map(repr, _INDEX_PAD_MODES))}")
    t = abstractify(array).element_type
    if isinstance(constant_values, Tracer) or np.ndim(constant_values) == 0:
        return lax.pad(array, _constant(constant_values, t),
                       [(int(lo), int(hi), 0) for lo, hi in widths])
    values = np.broadcast_to(np.asarray(constant_values), (rank, 2))
    for ax, ((lo, hi), (v_lo, v_hi)) in enumerate(zip(widths, values)):
        for side, (width, value) in enumerate(((lo, v_lo), (hi, v_hi))):
            config = [(0, 0, 0)] * rank
            config[ax] = (0, int(width), 0) if side else (int(width), 0, 0)
            array = lax.pad(array, _constant(value, t), config)
    return array


# -- creation ----------------------------------------------------------------------

def _shape_tuple(shape: int | Sequence[int]) -> tuple[int, ...]:
    return (operator.index(shape),) if isinstance(shape, (int, np.integer)) else \
        tuple(operator.index(n) for n in shape)


def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with ``fill_value`` (which may be an array
    broadcasting to ``shape``, or traced)."""
    t = canonical_type(dtype) if dtype is not None else _default_type(fill_value)
    return broadcast_to(_constant(fill_value, t), _shape_tuple(shape))


def zeros(shape: int | Sequence[int], dtype: Any = None) -> Any:
    """Zeros (of JAX's default float type unless ``dtype``: f32, f64 with x64)."""
    return full(shape, 0, core.default_float() if dtype is None else dtype)


def ones(shape: int | Sequence[int], dtype: Any = None) -> Any:
    return full(shape, 1, core.default_float() if dtype is None else dtype)


def full_like(a: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    aval = abstractify(a)
    return full(aval.dimensions if shape is None else shape, fill_value,
                aval.element_type if dtype is None else dtype)


def zeros_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(a, 0, dtype, shape)


def ones_like(a: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(a, 1, dtype, shape)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    """``start, start + step, ...`` up to (excluding) ``stop``, built from ``iota``.
    The bounds must be concrete; integers give JAX's default int (s32; s64
    with x64), floats its default float, unless ``dtype``."""
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    bounds = [np.asarray(v) for v in (start, stop, step)]  # traced bounds: ConcretizationError
    if float(bounds[2]) == 0:
        raise ValueError("arange: step must not be zero")
    if dtype is None:
        t = core.default_float() if builtins.any(b.dtype.kind in "fc" for b in bounds) else \
            core.default_int()
    else:
        t = canonical_type(dtype)
    n = builtins.max(math.ceil((float(bounds[1]) - float(bounds[0])) / float(bounds[2])), 0)
    out = lax.iota(t, n)
    if bounds[2] != 1:
        out = ew.mul(out, _constant(step, t))
    if bounds[0] != 0:
        out = ew.add(out, _constant(start, t))
    return out


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None) -> Any:
    """``num`` evenly spaced scalars from ``start`` to ``stop`` (which may be traced)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    t = canonical_type(dtype) if dtype is not None else core.default_float()
    ct = t if t.is_floating or t.is_complex else core.default_float()
    start, stop = _constant(start, ct), _constant(stop, ct)
    div = num - 1 if endpoint else num
    step = ew.div(ew.sub(stop, start), _constant(builtins.max(div, 1), ct))
    out = ew.add(ew.mul(lax.iota(ct, num), step), start)
    if endpoint and num > 1:  # the last element is ``stop`` exactly
        out = lax.concatenate([lax.slice(out, (0,), (num - 1,)), lax.reshape(stop, (1,))], 0)
    out = ew.convert_element_type(out, t) if ct is not t else out
    return (out, step) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """An ``N x M`` array with ones on diagonal ``k`` (built from two iotas)."""
    M = N if M is None else M
    t = core.default_float() if dtype is None else canonical_type(dtype)
    rows = lax.broadcasted_iota(PT.S32, (N, M), 0)
    cols = lax.broadcasted_iota(PT.S32, (N, M), 1)
    on_diagonal = ew.eq(ew.add(rows, int(k)) if k else rows, cols)
    return ew.select(on_diagonal, full((N, M), 1, t), full((N, M), 0, t))


def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)


# -- operators and methods of traced values ----------------------------------------

core.OPERATORS.update({
    "__getitem__": getitem,
    "attr:flatten": lambda x: lambda: ravel(x),
    "attr:ravel": lambda x: lambda: ravel(x),
    "attr:squeeze": lambda x: lambda axis=None: squeeze(x, axis),
    "attr:swapaxes": lambda x: lambda axis1, axis2: swapaxes(x, axis1, axis2),
    "attr:repeat": lambda x: lambda repeats, axis=None: repeat(x, repeats, axis),
})
