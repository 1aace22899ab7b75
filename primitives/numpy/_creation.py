"""NumPy-style layer: array creation beyond ``_indexing``'s basics.

``array`` (lists may hold traced values: they are stacked), ranges and
grids (``logspace``, ``geomspace``, ``indices``, ``meshgrid``, ``mgrid``,
``ogrid``, ``r_``, ``c_``, ``ix_``), triangles and diagonals (``tri``,
``tril``, ``triu``, ``diag``, ``diagflat``, the ``*_indices`` functions),
``vander``, window functions (``hanning``, ``kaiser``...), and NumPy's
readers (``frombuffer``, ``load``...) whose results become arrays.
Defaults as JAX's: floats are f32, integers s32; index arrays are s32.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer.config import canonicalize_type
from numxla.tracer import core
from numxla.tracer.core import EagerArray, Tracer, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from .. import elementwise as ew
from .. import shape_ops as lax
from ._core import _broadcast_all, asarray, broadcast_to, reshape, where
from ._indexing import arange, concatenate, full, linspace, stack, zeros
from ._types import element_type
from .._util import dims as _dims

__all__ = [
    "array", "copy", "empty", "empty_like", "fromfunction", "geomspace", "logspace", "indices",
    "meshgrid", "mgrid", "ogrid", "r_", "c_", "ix_", "tri", "tril", "triu", "diag", "diagflat",
    "diag_indices", "diag_indices_from", "tril_indices", "triu_indices", "tril_indices_from",
    "triu_indices_from", "mask_indices", "vander", "bartlett", "blackman", "hamming", "hanning",
    "kaiser", "frombuffer", "fromstring", "fromfile", "fromiter", "from_dlpack", "load",
    "array_repr", "array_str",
]



def _has_tracer(obj: Any) -> bool:
    if isinstance(obj, Tracer):
        return True
    return isinstance(obj, (list, tuple)) and builtins.any(_has_tracer(o) for o in obj)


def _concrete(obj: Any, t: PT | None) -> Any:
    """A non-traced value as an eager array (NumPy's, with JAX's ``.at``) of JAX's
    type: 64-bit types narrowed unless x64 is on; bf16 as an eager bf16 array."""
    from ._indexing import _constant
    if hasattr(obj, "__numxla_aval__") and t is None:  # e.g. eager bf16 arrays
        return obj
    arr = np.asarray(obj)
    if arr.dtype == object:
        raise TypeError(f"array: cannot make an array of {type(obj).__name__} {obj!r:.60}")
    target = t if t is not None else canonicalize_type(abstractify(arr).element_type)
    if arr.dtype.kind in "iu" and arr.size and not isinstance(obj, (np.ndarray, np.generic)):
        _check_python_ints_fit(arr, target)
    if target is PT.BF16 or arr.dtype != target.numpy_dtype:
        arr = _constant(arr, target)
    return arr.view(EagerArray) if type(arr) is np.ndarray else arr


def _check_python_ints_fit(arr: np.ndarray, target: PT) -> None:
    """Python ints become ``target`` exactly or not at all, as in JAX: an
    ``OverflowError`` rather than a wrapped value (NumPy arrays do wrap)."""
    if not target.is_integral:
        return
    info = np.iinfo(target.numpy_dtype)
    low, high = arr.min(), arr.max()
    if low < info.min or high > info.max:
        raise OverflowError(f"Python integer {low if low < info.min else high} out of bounds "
                            f"for {target.numpy_dtype}")


def array(object: Any, dtype: Any = None, copy: bool = True, order: str | None = None,
          ndmin: int = 0) -> Any:
    """JAX's ``array``: a new array from an array, a scalar, or (nested) lists
    and tuples, which may hold traced values (they are promoted together and
    stacked).  ``ndmin`` prepends size-1 axes."""
    t = None if dtype is None else element_type(dtype)
    if isinstance(object, Tracer):
        out = object if t is None else ew.convert_element_type(object, t)
    elif isinstance(object, (list, tuple)) and _has_tracer(object):
        if len(object) == 0:
            raise ValueError("array: an empty sequence holds no traced values")
        items = [array(o) for o in object]
        items = ew.promote(*items)
        out = stack(items, 0)
        out = out if t is None else ew.convert_element_type(out, t)
    else:
        out = _concrete(object, t)
        if copy and isinstance(object, np.ndarray) and np.may_share_memory(out, object):
            out = out.copy()
    rank = abstractify(out).ndim
    if ndmin > rank:
        out = reshape(out, (1,) * (ndmin - rank) + _dims(out))
    return out


def copy(a: Any, order: str | None = None) -> Any:
    """A copy (values are immutable while traced; NumPy arrays are copied)."""
    return array(a, copy=True)


def empty(shape: Any, dtype: Any = None) -> Any:
    """JAX's ``empty``: zeros (XLA has no uninitialised memory)."""
    return zeros(shape, core.default_float() if dtype is None else element_type(dtype))


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None) -> Any:
    from ._indexing import zeros_like
    return zeros_like(prototype, None if dtype is None else element_type(dtype), shape)


def _float_type(dtype: Any) -> PT:
    return core.default_float() if dtype is None else element_type(dtype)


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num)``."""
    t = _float_type(dtype)
    ct = t if t.is_floating or t.is_complex else PT.F32
    exps = linspace(start, stop, num, endpoint, dtype=ct)
    out = ew.pow(*_broadcast_all(*ew.promote(ew.convert_element_type(base, ct), exps)))
    return ew.convert_element_type(out, t)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """Numbers spaced evenly on a log scale from ``start`` to ``stop`` (same sign)."""
    t = _float_type(dtype)
    ct = t if t.is_floating or t.is_complex else PT.F32
    start, stop = ew.convert_element_type(start, ct), ew.convert_element_type(stop, ct)
    sign = ew.sign(start)
    logs = linspace(ew.log(ew.abs(start)), ew.log(ew.abs(stop)), num, endpoint, dtype=ct)
    out = ew.mul(ew.exp(logs), broadcast_to(sign, (num,)))
    if num > 0:  # the ends exactly
        ends = [lax.reshape(start, (1,)), lax.slice(out, (1,), (num - 1,))] if num > 1 else \
            [lax.reshape(start, (1,))]
        if endpoint and num > 1:
            ends.append(lax.reshape(stop, (1,)))
        elif num > 1:
            ends.append(lax.slice(out, (num - 1,), (num,)))
        out = lax.concatenate(ends, 0)
    return ew.convert_element_type(out, t)


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False) -> Any:
    """The index grids of an array of shape ``dimensions`` (s32): stacked, or
    broadcastable pieces if ``sparse``."""
    t = core.default_int() if dtype is None else element_type(dtype)
    dims = tuple(operator.index(d) for d in dimensions)
    n = len(dims)
    grids = []
    for i, d in enumerate(dims):
        shape = tuple(d if j == i else 1 for j in range(n))
        g = lax.broadcasted_iota(t, shape, i)
        grids.append(g if sparse else broadcast_to(g, dims))
    if sparse:
        return tuple(grids)
    return stack(grids, 0) if grids else zeros((0,), t)


def fromfunction(function: Callable[..., Any], shape: Sequence[int], *, dtype: Any = float,
                 **kwargs: Any) -> Any:
    """``function(*indices(shape))``: called once with the coordinate grids."""
    t = element_type(dtype)
    return function(*[ew.convert_element_type(g, t) for g in indices(shape)], **kwargs)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
             ) -> list[Any]:
    """Coordinate matrices from 1-D coordinate vectors (``indexing`` "xy":
    the first two axes swapped, as in NumPy)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [reshape(asarray(x), (-1,)) for x in xi]
    n = len(xs)
    sizes = [_dims(x)[0] for x in xs]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and n >= 2 else i
        shape = tuple(sizes[j] if j == axis else 1 for j in range(n))
        x = reshape(x, shape)
        out.append(x if sparse else broadcast_to(x, tuple(sizes)))
    return out


def _slice_values(s: slice) -> Any:
    """A grid slice: ``start:stop:step`` an arange; a complex step ``Nj`` N points."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex) or np.iscomplexobj(step):
        return linspace(start, s.stop, int(abs(step)), endpoint=True)
    return arange(start, s.stop, step)


class _Grid:
    """``mgrid[...]`` / ``ogrid[...]``: dense or open multi-dimensional grids."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        axes = ew.promote(*axes)
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return grids if self.sparse else stack(grids, 0)


mgrid, ogrid = _Grid(False), _Grid(True)


class _Concatenator:
    """``r_`` / ``c_``: NumPy's index tricks that concatenate slices (as
    ranges), scalars and arrays; a leading string ``"axis[,ndmin[,trans1d]]"``
    (or ``"r"``/``"c"``) sets how."""

    def __init__(self, axis: int, ndmin: int, trans1d: int):
        self.defaults = (axis, ndmin, trans1d)

    def __getitem__(self, key: Any) -> Any:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.defaults
        matrix = None
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            if directive in ("r", "c"):
                matrix = directive
            else:
                parts = [int(p) for p in directive.split(",")]
                axis, ndmin, trans1d = (parts + [ndmin, trans1d][len(parts) - 1:])[:3]
        arrays = []
        for item in items:
            if isinstance(item, slice):
                x = _slice_values(item)
            else:
                x = array(item, copy=False)
            rank = abstractify(x).ndim
            if rank < ndmin:
                shape = _dims(x)
                new = [1] * ndmin
                t1 = trans1d if trans1d >= 0 else ndmin + trans1d
                t1 = builtins.min(t1, ndmin - rank)
                new[t1:t1 + rank] = shape
                x = reshape(x, new)
            arrays.append(x)
        if not arrays:
            return zeros((0,))
        arrays = [a if abstractify(a).ndim else reshape(a, (1,)) for a in arrays]
        out = concatenate(arrays, axis)
        if matrix == "r":
            out = reshape(out, (1, -1))
        elif matrix == "c":
            out = reshape(out, (-1, 1))
        return out

    def __len__(self) -> int:
        return 0


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays: the ``i``-th 1-D sequence shaped to broadcast along
    axis ``i`` (boolean sequences become their nonzero positions; concrete only)."""
    out = []
    n = len(args)
    for i, a in enumerate(args):
        a = asarray(a)
        if abstractify(a).ndim != 1:
            raise ValueError("ix_: cross index must be 1-dimensional")
        if abstractify(a).element_type is PT.PRED:
            a = np.nonzero(np.asarray(a))[0].astype(np.int32)
        out.append(reshape(a, tuple(-1 if j == i else 1 for j in range(n))))
    return tuple(out)


# -- triangles and diagonals -------------------------------------------------------------------

def _tri_mask(n: int, m: int, k: int) -> Any:
    """``j <= i + k`` on an n x m grid (two iotas)."""
    rows = lax.broadcasted_iota(PT.S32, (n, m), 0)
    cols = lax.broadcasted_iota(PT.S32, (n, m), 1)
    return ew.le(cols, ew.add(rows, np.int32(k)))


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Ones at and below diagonal ``k`` (f32 by default)."""
    M = N if M is None else M
    return ew.convert_element_type(_tri_mask(N, M, k), _float_type(dtype))


def _triangle(m: Any, k: int, lower: bool) -> Any:
    m = asarray(m)
    dims = _dims(m)
    if len(dims) < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: the input must have at least 2 "
                         f"dimensions, got shape {dims}")
    keep = _tri_mask(dims[-2], dims[-1], k if lower else k - 1)
    keep = keep if lower else ew.not_(keep)
    return where(keep, m, ew.convert_element_type(0, abstractify(m).element_type))


def tril(m: Any, k: int = 0) -> Any:
    """The lower triangle (at and below diagonal ``k``) of the last two axes."""
    return _triangle(m, k, True)


def triu(m: Any, k: int = 0) -> Any:
    """The upper triangle (at and above diagonal ``k``) of the last two axes."""
    return _triangle(m, k, False)


def diag(v: Any, k: int = 0) -> Any:
    """A 1-D ``v``: the square matrix with ``v`` on diagonal ``k``; a 2-D ``v``: its
    ``k``-th diagonal."""
    v = asarray(v)
    dims = _dims(v)
    if len(dims) == 2:
        from ._shaping import diagonal
        return diagonal(v, k)
    if len(dims) != 1:
        raise ValueError("diag: input must be 1- or 2-dimensional")
    n, t = dims[0] + builtins.abs(k), abstractify(v).element_type
    padded = lax.pad(v, ew.convert_element_type(0, t), [(0, builtins.abs(k), 0)])
    rows = lax.broadcasted_iota(PT.S32, (n, n), 0)
    cols = lax.broadcasted_iota(PT.S32, (n, n), 1)
    # k >= 0: out[i, i + k] = v[i] (v along the rows); k < 0: out[j - k, j] = v[j]
    values = lax.broadcast_in_dim(padded, (n, n), (0,) if k >= 0 else (1,))
    on = ew.eq(ew.add(rows, np.int32(k)), cols)
    return where(on, values, ew.convert_element_type(0, t))


def diagflat(v: Any, k: int = 0) -> Any:
    """``diag`` of the flattened input."""
    return diag(reshape(asarray(v), (-1,)), k)


def _index_pair(rows: np.ndarray, cols: np.ndarray) -> tuple[Any, Any]:
    return rows.astype(np.int32), cols.astype(np.int32)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    return tuple(np.arange(n, dtype=np.int32) for _ in range(ndim))


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    dims = _dims(arr)
    if len(dims) < 2 or len(set(dims)) != 1:
        raise ValueError("diag_indices_from: input must be at least 2-d with equal dimensions")
    return diag_indices(dims[0], len(dims))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _index_pair(*np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _index_pair(*np.triu_indices(n, k, m))


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    dims = _dims(arr)
    return tril_indices(dims[-2], k, dims[-1])


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    dims = _dims(arr)
    return triu_indices(dims[-2], k, dims[-1])


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0) -> tuple[Any, Any]:
    """The indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``triu``)."""
    mask = np.asarray(mask_func(np.ones((n, n), np.int32), k))
    return _index_pair(*np.nonzero(mask))


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """The Vandermonde matrix: columns ``x ** (N-1), ..., x, 1`` (reversed if
    ``increasing``), as a cumulative product."""
    x = asarray(x)
    if abstractify(x).ndim != 1:
        raise ValueError("vander: x must be a one-dimensional array")
    n = _dims(x)[0]
    N = n if N is None else N
    t = abstractify(x).element_type
    if N == 0:
        return zeros((n, 0), t)
    from ._reductions import cumprod
    ones = broadcast_to(ew.convert_element_type(1, t), (n, 1))
    powers = cumprod(lax.concatenate([ones, broadcast_to(reshape(x, (n, 1)), (n, N - 1))], 1), 1)
    return powers if increasing else lax.rev(powers, (1,))


# -- window functions --------------------------------------------------------------------------

def _window(M: int, fn: Callable[[Any], Any]) -> Any:
    """``fn`` of the angles ``2 pi n / (M - 1)``, n = 0..M-1 (f32)."""
    M = operator.index(M)
    if M < 1:
        return zeros((0,), PT.F32)
    if M == 1:
        return full((1,), 1.0, PT.F32)
    n = lax.iota(PT.F32, M)
    return fn(n, M)


def bartlett(M: int) -> Any:
    """The triangular window."""
    return _window(M, lambda n, M: ew.sub(np.float32(1), ew.abs(
        ew.sub(ew.mul(n, np.float32(2.0 / (M - 1))), np.float32(1)))))


def _cosine_sum(coefficients: Sequence[float]):
    def fn(n, M):
        out = full((M,), coefficients[0], PT.F32)
        for i, c in enumerate(coefficients[1:], start=1):
            term = ew.cos(ew.mul(n, np.float32(2 * np.pi * i / (M - 1))))
            out = ew.add(out, ew.mul(term, np.float32(c * (-1) ** i)))
        return out
    return fn


def blackman(M: int) -> Any:
    """The Blackman window: 0.42 - 0.5 cos(2 pi n / (M-1)) + 0.08 cos(4 pi n / (M-1))."""
    return _window(M, _cosine_sum((0.42, 0.5, 0.08)))


def hamming(M: int) -> Any:
    """The Hamming window: 0.54 - 0.46 cos(2 pi n / (M-1))."""
    return _window(M, _cosine_sum((0.54, 0.46)))


def hanning(M: int) -> Any:
    """The Hann window: 0.5 - 0.5 cos(2 pi n / (M-1))."""
    return _window(M, _cosine_sum((0.5, 0.5)))


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window: i0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / i0(beta)."""
    from ._ufuncs import i0

    def fn(n, M):
        b = ew.convert_element_type(beta, PT.F32)
        r = ew.sub(ew.mul(n, np.float32(2.0 / (M - 1))), np.float32(1))
        arg = ew.sqrt(ew.max(ew.sub(np.float32(1), ew.mul(r, r)), np.float32(0)))
        return ew.div(i0(ew.mul(broadcast_to(b, (M,)), arg)), broadcast_to(i0(b), (M,)))
    return _window(M, fn)


# -- NumPy readers and printing ----------------------------------------------------------------

def _from_numpy(reader: Callable[..., np.ndarray]):
    def fn(*args: Any, **kwargs: Any) -> Any:
        return array(reader(*args, **kwargs), copy=False)
    fn.__name__ = reader.__name__
    fn.__doc__ = f"NumPy's ``{reader.__name__}``, its result as an array (JAX's types)."
    return fn


frombuffer = _from_numpy(np.frombuffer)
fromstring = _from_numpy(np.fromstring)
fromfile = _from_numpy(np.fromfile)
fromiter = _from_numpy(np.fromiter)
from_dlpack = _from_numpy(np.from_dlpack)


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """NumPy's ``load``; an ``.npy`` array becomes an array (archives stay NumPy's)."""
    out = np.load(file, *args, **kwargs)
    return array(out, copy=False) if isinstance(out, np.ndarray) else out


def array_repr(arr: Any, max_line_width: int | None = None, precision: int | None = None,
               suppress_small: bool | None = None) -> str:
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a: Any, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


core.OPERATORS.update({
    "attr:copy": lambda x: lambda order=None: copy(x),
})
