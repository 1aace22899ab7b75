"""``jax.lax`` functions XLA has no op for, composed from the op set as JAX
composes them: inverse and hyperbolic trig, ``integer_pow``, ``select_n``,
``full``, the ``*_in_dim`` index helpers, ``batch_matmul``, ``split``,
``conv_transpose``, ``psum_scatter``, ``approx_max_k`` and ``lax.linalg``.

Unlike ``numxla.numpy`` these do not promote: operands keep their types, and
a function of floats refuses integers, as ``jax.lax`` does.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer.core import ShapeError, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

from . import collectives as coll
from . import dot_conv as dc
from . import elementwise as ew
from . import shape_ops as so
from .dtypes import canonical_type

__all__ = ["acos", "acosh", "asin", "asinh", "atan", "atanh", "sinh", "cosh", "exp2",
           "square", "reciprocal", "integer_pow", "conj", "nextafter", "full", "full_like",
           "select_n", "index_in_dim", "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "batch_matmul", "broadcast_to_rank", "split",
           "conv_transpose", "psum_scatter", "axis_size", "approx_max_k", "approx_min_k",
           "dtype", "broadcast_shapes", "with_sharding_constraint", "linalg",
           "ConvGeneralDilatedDimensionNumbers", "stack", "unstack", "tile", "empty",
           "broadcast_like", "scatter_sub", "platform_dependent", "composite"]


def _inexact(name: str, numpy_name: str) -> Callable[[Any], Any]:
    """A ``jax.lax`` function of floats and complex numbers, computed by the
    NumPy layer's composition (which would promote integers: refused here)."""
    def fn(x: Any) -> Any:
        t = abstractify(x).element_type
        if not (t.is_floating or t.is_complex):
            raise ShapeError(name, f"the operand must be floating or complex, not {t.name}",
                             abstractify(x))
        from . import numpy as xnp  # the layer above: its compositions handle complex too
        return getattr(xnp, numpy_name)(x)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``jax.lax.{name}``, element-wise (``numpy.{numpy_name}``'s composition)."
    return fn


acos, acosh, asin = _inexact("acos", "arccos"), _inexact("acosh", "arccosh"), \
    _inexact("asin", "arcsin")
asinh, atan, atanh = _inexact("asinh", "arcsinh"), _inexact("atan", "arctan"), \
    _inexact("atanh", "arctanh")
sinh, cosh, exp2 = _inexact("sinh", "sinh"), _inexact("cosh", "cosh"), _inexact("exp2", "exp2")


def nextafter(x1: Any, x2: Any) -> Any:
    """The next representable number after ``x1`` towards ``x2`` (same float types)."""
    a, b = abstractify(x1), abstractify(x2)
    if a.element_type is not b.element_type or not a.element_type.is_floating:
        raise ShapeError("nextafter", "the operands must be floats of one type", a, b)
    from . import numpy as xnp
    return xnp.nextafter(x1, x2)


def square(x: Any) -> Any:
    """``x * x``."""
    return ew.mul(x, x)


def reciprocal(x: Any) -> Any:
    """``1 / x`` (``integer_pow(x, -1)``)."""
    return integer_pow(x, -1)


def integer_pow(x: Any, y: int) -> Any:
    """``x ** y`` for a Python integer ``y``, by repeated squaring (JAX's
    ``integer_pow``: ``log2 |y|`` multiplies; a negative ``y`` divides 1 by the result)."""
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TypeError(f"integer_pow: the exponent must be a Python int, not {y!r}")
    aval = abstractify(x)
    one = np.ones((), aval.element_type.numpy_dtype)
    if y == 0:
        return so.broadcast_in_dim(one, aval.dimensions, ())
    result, base, n = None, x, abs(int(y))
    while n:
        if n & 1:
            result = base if result is None else ew.mul(result, base)
        n >>= 1
        if n:
            base = ew.mul(base, base)
    return ew.div(so.broadcast_in_dim(one, aval.dimensions, ()), result) if y < 0 else result


def conj(x: Any) -> Any:
    """The complex conjugate; a real operand becomes complex (as ``jax.lax.conj``)."""
    t = abstractify(x).element_type
    if t.is_complex:
        return ew.complex(ew.real(x), ew.neg(ew.imag(x)))
    if not t.is_floating:
        raise ShapeError("conj", f"the operand must be floating or complex, not {t.name}",
                         abstractify(x))
    real = x if t in (PT.F32, PT.F64) else ew.convert_element_type(x, PT.F32)
    aval = abstractify(real)
    zero = so.broadcast_in_dim(np.zeros((), aval.element_type.numpy_dtype), aval.dimensions, ())
    return ew.complex(real, ew.neg(zero))


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` filled with the scalar ``fill_value`` (of ``dtype``
    if given, else of the value's own type, 64-bit narrowed unless x64)."""
    shape = tuple(int(d) for d in shape)
    value = fill_value
    if isinstance(value, (bool, int, float, complex, np.generic, np.ndarray)):
        value = np.asarray(value)
        dtype = value.dtype if dtype is None else dtype
    if abstractify(value).ndim:
        raise ShapeError("full", f"fill_value must be a scalar, not shape "
                                 f"{abstractify(value).dimensions}")
    if dtype is not None:
        value = ew.convert_element_type(value, canonical_type(dtype))
    return so.broadcast_in_dim(value, shape, ())


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Sequence[int] | None = None
              ) -> Any:
    """``full`` with ``x``'s shape and type unless given."""
    aval = abstractify(x)
    return full(aval.dimensions if shape is None else shape, fill_value,
                aval.element_type if dtype is None else dtype)


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` element-wise: ``which`` is a pred (two cases) or an
    integer array (``jax.lax.select_n``)."""
    if not cases:
        raise ShapeError("select_n", "needs at least one case")
    if len(cases) == 1:
        return cases[0]
    t = abstractify(which).element_type
    if t is PT.PRED:
        if len(cases) != 2:
            raise ShapeError("select_n", f"a pred selector picks between 2 cases, not {len(cases)}")
        return ew.select(which, cases[1], cases[0])
    result = cases[0]
    for i, case in enumerate(cases[1:], start=1):
        result = ew.select(ew.eq(which, np.asarray(i, t.numpy_dtype)), case, result)
    return result


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """Element ``index`` (negative counts from the end) along ``axis``."""
    n = abstractify(operand).dimensions[axis]
    if not -n <= index < n:
        raise ShapeError("index_in_dim", f"index {index} is out of range for extent {n} "
                                         f"along axis {axis}", abstractify(operand))
    index %= n
    out = so.slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else so.squeeze(out, (axis,))


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    """Element ``index`` (a run-time scalar, negative from the end, clamped) along ``axis``."""
    out = so.dynamic_slice_in_dim(operand, index, 1, axis,
                                  allow_negative_indices=allow_negative_indices)
    return out if keepdims else so.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``update`` written at ``start_index`` along ``axis``."""
    starts = [np.int32(0)] * abstractify(operand).ndim
    starts[axis] = start_index
    return so.dynamic_update_slice(operand, update, starts,
                                   allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    """``update`` (with or without the axis) written at ``index`` along ``axis``."""
    if abstractify(update).ndim == abstractify(operand).ndim - 1:
        update = so.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over the leading (batch) dimensions."""
    rank = abstractify(lhs).ndim
    if rank < 2 or abstractify(rhs).ndim != rank:
        raise ShapeError("batch_matmul", "operands must have one rank, at least 2",
                         abstractify(lhs), abstractify(rhs))
    batch = tuple(range(rank - 2))
    return dc.dot_general(lhs, rhs, (((rank - 1,), (rank - 2,)), (batch, batch)),
                          precision=precision)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading dimensions of 1 added up to ``rank``."""
    dims = abstractify(x).dimensions
    if rank < len(dims):
        raise ShapeError("broadcast_to_rank", f"rank {rank} is below the operand's "
                                              f"{len(dims)}", abstractify(x))
    return so.reshape(x, (1,) * (rank - len(dims)) + dims)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """Consecutive pieces of ``sizes`` along ``axis`` (they must add up to its extent)."""
    n = abstractify(operand).dimensions[axis]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise ShapeError("split", f"sizes {tuple(sizes)} must be non-negative and add up to "
                                  f"the extent {n} along axis {axis}", abstractify(operand))
    bounds = np.cumsum((0,) + tuple(sizes))
    return [so.slice_in_dim(operand, int(a), int(b), 1, axis) for a, b in zip(bounds, bounds[1:])]


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """The operands (of one shape) joined along a new dimension ``axis``."""
    if not operands:
        raise ShapeError("stack", "needs at least one operand")
    rank = abstractify(operands[0]).ndim
    axis = axis % (rank + 1)
    return so.concatenate([so.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, without that dimension."""
    n = abstractify(x).dimensions[axis]
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(n))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[d]`` times along each dimension (as ``numpy.tile``
    with ``len(reps)`` equal to the rank)."""
    dims = abstractify(operand).dimensions
    if len(reps) != len(dims):
        raise ShapeError("tile", f"reps {tuple(reps)} must have one entry per dimension "
                                 f"of {dims}", abstractify(operand))
    spread = tuple(x for r, n in zip(reps, dims) for x in (r, n))
    tiled = so.broadcast_in_dim(operand, spread, tuple(range(1, 2 * len(dims), 2)))
    return so.reshape(tiled, tuple(r * n for r, n in zip(reps, dims)))


def empty(shape: Sequence[int], dtype: Any) -> Any:
    """An array of ``shape`` whose values do not matter (zeros here)."""
    return full(shape, 0, dtype)


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast (NumPy's rule, trailing dimensions) to ``like_arr``'s shape."""
    src, dst = abstractify(arr).dimensions, abstractify(like_arr).dimensions
    return so.broadcast_in_dim(arr, dst, tuple(range(len(dst) - len(src), len(dst))))


def scatter_sub(operand: Any, scatter_indices: Any, updates: Any, dimension_numbers: Any, *,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                mode: Any = None) -> Any:
    """``scatter_add`` of the negated updates."""
    from .indexing import scatter_add
    return scatter_add(operand, scatter_indices, ew.neg(updates), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                       mode=mode)


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """The ``cpu`` branch (numxla's only platform), else ``default``."""
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(f"platform_dependent: no branch for 'cpu' among "
                                  f"{sorted(per_platform)} and no default")
    return branch(*args)


def composite(decomposition: Callable[..., Any], name: str, version: int = 0
              ) -> Callable[..., Any]:
    """``decomposition`` itself: a composite's meaning is its decomposition."""
    return decomposition


def _transpose_padding(padding: Any, kernel: Sequence[int], strides: Sequence[int]) -> list:
    """The explicit padding of the dilated-input convolution that is the
    transpose of one with ``padding`` (JAX's ``_conv_transpose_padding``)."""
    if isinstance(padding, str):
        pads = []
        for k, s in zip(kernel, strides):
            if padding.upper() == "SAME":
                total = k + s - 2
                before = k - 1 if s > k - 1 else int(np.ceil(total / 2))
            elif padding.upper() == "VALID":
                total = k + s - 2 + max(k - s, 0)
                before = k - 1
            else:
                raise ShapeError("conv_transpose", f"padding {padding!r} must be 'SAME', "
                                                   f"'VALID' or (low, high) pairs")
            pads.append((before, total - before))
        return pads
    return [tuple(p) for p in padding]


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Any,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None) -> Any:
    """The transposed ("fractionally strided") convolution of ``jax.lax.conv_transpose``:
    a convolution over ``lhs`` dilated by ``strides``."""
    rank = abstractify(lhs).ndim
    if dimension_numbers is None:
        dimension_numbers = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                             4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}[rank]
    dn = dc.conv_dimension_numbers(abstractify(lhs).dimensions, abstractify(rhs).dimensions,
                                   dimension_numbers)
    k_spatial = [abstractify(rhs).dimensions[d] for d in dn.rhs_spec[2:]]
    dilation = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * (rank - 2)
    effective = [(k - 1) * r + 1 for k, r in zip(k_spatial, dilation)]
    pads = _transpose_padding(padding, effective, strides)
    if transpose_kernel:  # flip the spatial axes and swap the feature axes
        rhs = so.rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(rank))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
        rhs = so.transpose(rhs, tuple(perm))
    return dc.conv_general_dilated(lhs, rhs, (1,) * (rank - 2), pads, lhs_dilation=tuple(strides),
                                   rhs_dilation=dilation, dimension_numbers=dn,
                                   precision=precision,
                                   preferred_element_type=preferred_element_type)


def axis_size(axis_name: str) -> int:
    """The number of replicas along the pmap axis ``axis_name``."""
    return coll._axis_size("axis_size", axis_name)


def psum_scatter(x: Any, axis_name: str, *, scatter_dimension: int = 0,
                 tiled: bool = False) -> Any:
    """``psum`` whose result is split along ``scatter_dimension``: each replica
    keeps its own piece (a ReduceScatter). Untiled, the dimension's extent
    must equal the number of replicas and is removed."""
    n = axis_size(axis_name)
    extent = abstractify(x).dimensions[scatter_dimension]
    if not tiled and extent != n:
        raise ShapeError("psum_scatter", f"untiled, the scatter dimension's extent {extent} "
                                         f"must be the axis size {n}", abstractify(x))
    out = coll.reduce_scatter(x, ew.add, scatter_dimension, n)
    return out if tiled else so.squeeze(out, (scatter_dimension,))


def _approx_k(name: str, largest: bool) -> Callable[..., tuple[Any, Any]]:
    def fn(operand: Any, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
           reduction_input_size_override: int = -1, aggregate_to_topk: bool = True
           ) -> tuple[Any, Any]:
        rank = abstractify(operand).ndim
        axis = reduction_dimension % rank
        if axis == rank - 1:
            return so_top_k(operand, k, largest)
        perm = tuple(d for d in range(rank) if d != axis) + (axis,)
        back = tuple(int(i) for i in np.argsort(perm))
        values, indices = so_top_k(so.transpose(operand, perm), k, largest)
        return so.transpose(values, back), so.transpose(indices, back)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``jax.lax.{name}``: the exact top-k (recall 1, which meets any "
                  f"``recall_target``) along ``reduction_dimension``.")
    return fn


def so_top_k(operand: Any, k: int, largest: bool) -> tuple[Any, Any]:
    from .sorting import top_k
    return top_k(operand, k, largest=largest)


approx_max_k = _approx_k("approx_max_k", True)
approx_min_k = _approx_k("approx_min_k", False)


def dtype(x: Any) -> np.dtype:
    """The NumPy dtype of ``x`` (as ``jax.lax.dtype``, with x64 canonicalisation)."""
    value = x if hasattr(x, "dtype") else np.asarray(x)
    return np.dtype(canonical_type(value.dtype).numpy_dtype)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape the given shapes broadcast to (NumPy's rule)."""
    return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` (one device: every sharding is the whole array)."""
    return x


class _LazyLinalg(types.ModuleType):
    """``jax.lax.linalg``, loaded on first attribute access (it needs the NumPy
    layer): the functions of ``_lax_linalg``."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name != "__all__":   # probes of sys.modules' entries
            raise AttributeError(name)
        from . import _lax_linalg
        self.__dict__.update({k: getattr(_lax_linalg, k) for k in _lax_linalg.__all__})
        self.__all__ = list(_lax_linalg.__all__)
        self.__doc__ = _lax_linalg.__doc__
        if name not in self.__dict__:
            raise AttributeError(f"module 'numxla.lax.linalg' has no attribute {name!r}")
        return self.__dict__[name]

    def __dir__(self) -> list[str]:
        self.__getattr__("__all__")
        return sorted(self.__dict__)


linalg = _LazyLinalg("numxla.lax.linalg")
# ``import jax.lax.linalg`` (numxla.lax is this package under JAX's name)
sys.modules.setdefault("numxla.lax.linalg", linalg)


ConvGeneralDilatedDimensionNumbers = dc.ConvDimensionNumbers
