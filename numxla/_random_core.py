"""Building blocks shared by ``numxla.random``'s samplers: dtype and shape
rules (JAX's), floats from random bits, and the internal forms of the
samplers others are built from (``_uniform``, ``_normal_real``, ``_gumbel``,
``_exponential``, ``_shuffle``), which take a checked key and canonical
shape and dtype. ``_uniform``, ``_normal_real``, ``_exponential`` and
``_split`` also take keys of ``uint32[*batch, 2]``: each key's draws, of
``(*batch, *shape)`` (``vmap`` over the keys, without tracing a batch)."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.dtypes import canonical_type
from numxla.tracer.config import config
from numxla.tracer.core import Tracer, abstractify

from ._random_threefry import UINT_DTYPES, random_bits as _bits, split_key
from ._random_xla_math import erf_inv, fma, mul_add, xla_log, xla_log1p


def _default(kind: str) -> np.dtype:
    wide = config.jax_enable_x64
    return np.dtype({"f": np.float64 if wide else np.float32, "i": np.int64 if wide else np.int32,
                     "u": np.uint64 if wide else np.uint32}[kind])


def _dtype(name: str, dtype: Any, kind: str) -> np.dtype:
    """The requested dtype, canonical (64-bit narrowed without x64), of ``kind``
    (``'f'`` float, ``'i'`` integer, ``'u'`` unsigned)."""
    t = _default(kind) if dtype is None else canonical_type(dtype).numpy_dtype
    ok = {"f": np.issubdtype(t, np.floating) and t.itemsize in (2, 4, 8),
          "i": np.issubdtype(t, np.integer), "u": np.issubdtype(t, np.unsignedinteger)}[kind]
    if not ok or (dtype is not None and canonical_type(dtype).name == "BF16"):
        what = {"f": "a float", "i": "an int", "u": "an unsigned int"}[kind]
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")
    return t


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def _dims(x: Any) -> tuple[int, ...]:
    return abstractify(x).dimensions


def _check_shape(name: str, shape: tuple[int, ...], **param_shapes: Sequence[int]) -> None:
    """That the parameters' shapes broadcast to ``shape`` (JAX's rule), or a
    ValueError naming the function and the parameters."""
    if not param_shapes:
        return
    try:
        result = xnp.broadcast_shapes(shape, *param_shapes.values())
    except ValueError:
        result = None
    if result != shape:
        given = ", ".join(f"{param} {tuple(dims)}" for param, dims in param_shapes.items())
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                         f"argument, and the result of broadcasting the shapes must equal the "
                         f"shape argument, but got {given} for shape argument {shape}.")


def _param_shape(name: str, shape: Any, **params: Any) -> tuple[int, ...]:
    """``shape`` checked against the named parameters' shapes, or (``None``)
    their broadcast shape."""
    shapes = {param: _dims(value) for param, value in params.items()}
    if shape is None:
        try:
            return xnp.broadcast_shapes(*shapes.values()) if shapes else ()
        except ValueError:
            given = ", ".join(f"{param} {dims}" for param, dims in shapes.items())
            raise ValueError(f"{name}: the shapes of its parameters do not broadcast "
                             f"together: {given}") from None
    shape = _shape(shape)
    _check_shape(name, shape, **shapes)
    return shape


def _as(x: Any, dtype: np.dtype) -> Any:
    """A parameter as an array of ``dtype`` (Python scalars convert now)."""
    return lax.convert_element_type(x, dtype)


def _full(x: Any, shape: tuple[int, ...]) -> Any:
    return xnp.broadcast_to(x, shape)


def _batched(key: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a draw of ``shape`` from each of the keys ``key``."""
    return (*_dims(key)[:-1], *shape)


def _unit_floats(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Floats in [0, 1): random mantissa bits under the exponent of 1.0, minus 1."""
    info = np.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    uint = UINT_DTYPES[nbits]
    b = _bits(key, nbits if nmant >= 8 else 8, shape)   # JAX: 8 bits at least
    shape = _dims(b)
    if abstractify(b).dtype != uint:
        b = lax.convert_element_type(b, uint)
    mantissa = lax.shift_right_logical(b, _full(uint.type(nbits - nmant), shape))
    one_bits = np.array(1.0, dtype).view(uint)
    floats = lax.bitcast_convert_type(lax.bitwise_or(mantissa, _full(one_bits, shape)), dtype)
    return lax.sub(floats, _full(dtype.type(1.0), shape))


def _uniform(key: Any, shape: tuple[int, ...], dtype: np.dtype, minval: Any, maxval: Any) -> Any:
    """``max(minval, floats * (maxval - minval) + minval)``, with the multiply-add
    fused as XLA:CPU fuses it; emulated exactly unless the product is exact
    anyway (a span that is a known power of two, as for [0, 1) and (-1, 1))."""
    exact_product = _power_of_two(_static_span(minval, maxval, dtype))
    minval, maxval = (_full(_as(v, dtype), _batched(key, shape)) for v in (minval, maxval))
    floats = _unit_floats(key, shape, dtype)
    scaled = (mul_add if exact_product else fma)(floats, lax.sub(maxval, minval), minval)
    return lax.max(minval, scaled)


def _static_span(minval: Any, maxval: Any, dtype: np.dtype) -> Any:
    """``maxval - minval`` in ``dtype`` when both are known now, else None."""
    if any(isinstance(v, Tracer) or np.ndim(v) for v in (minval, maxval)):
        return None
    return np.asarray(maxval, dtype) - np.asarray(minval, dtype)


def _power_of_two(x: Any) -> bool:
    return x is not None and np.isfinite(x) and x > 0 and np.frexp(x)[0] == 0.5


def _nextafter(x: Any, up: bool) -> Any:
    """The next float after ``x`` toward +inf (``up``) or -inf, for finite ``x``."""
    dtype, dims = abstractify(x).dtype, _dims(x)
    uint = UINT_DTYPES[dtype.itemsize * 8]
    c = lambda v, t=dtype: _full(t.type(v), dims)  # noqa: E731
    b = lax.bitcast_convert_type(x, uint)
    grows = lax.ge(x, c(0)) if up else lax.le(x, c(0))    # the magnitude grows
    stepped = lax.select(grows, lax.add(b, c(1, uint)), lax.sub(b, c(1, uint)))
    tiny = np.finfo(dtype).smallest_subnormal * (1 if up else -1)
    return lax.select(lax.eq(x, c(0)), c(tiny), lax.bitcast_convert_type(stepped, dtype))


def _normal_real(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = _uniform(key, shape, dtype, lo, dtype.type(1.0))
    return lax.mul(_full(dtype.type(np.sqrt(2)), _batched(key, shape)), erf_inv(u))


def _split(key: Any, n: int = 2) -> tuple[Any, ...]:
    """``split(key, n)`` as a tuple of ``n`` keys (of key arrays, from a key array)."""
    keys = split_key(key, (n,))
    batch = _dims(key)[:-1]
    zeros = (0,) * len(batch)
    return tuple(lax.reshape(lax.slice(keys, (*zeros, i, 0), (*batch, i + 1, 2)), (*batch, 2))
                 for i in range(n))


def _exponential(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return lax.neg(xla_log1p(lax.neg(_uniform(key, shape, dtype, 0.0, 1.0))))


def _gumbel(key: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    info = np.finfo(dtype)
    neg_log = lambda v: lax.neg(xla_log(v))  # noqa: E731
    if mode == "low":
        return neg_log(lax.neg(xla_log(_uniform(key, shape, dtype, info.tiny, 1.0))))
    if mode != "high":
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    both = _uniform(key, (2, *shape), dtype, 0.0, 1.0)
    high, low = (lax.reshape(lax.slice(both, (i, *[0] * len(shape)), (i + 1, *shape)), shape)
                 for i in (0, 1))
    c = lambda v: _full(dtype.type(v), shape)  # noqa: E731
    x = lax.select(lax.ge(high, c(0.5)), high,
                   lax.add(mul_add(c(2.0 ** -info.nmant), low, high), c(info.tiny)))
    return neg_log(lax.neg(xla_log1p(lax.neg(x))))


def _shuffle(key: Any, x: Any, axis: int) -> Any:
    """Sort ``x`` along ``axis`` by fresh random 32-bit keys, as many rounds as
    make collisions unlikely (one below 1626 elements, two below 2**21...)."""
    size = math.prod(_dims(x))
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, subkey = _split(key)
        _, x = lax.sort_key_val(_bits(subkey, 32, _dims(x)), x, axis)
    return x


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {rank}")
    return axis % rank

