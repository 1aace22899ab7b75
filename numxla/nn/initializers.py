"""``jax.nn.initializers`` for numxla: each returns ``init(key, shape,
dtype=None)`` drawing from ``numxla.random`` with JAX's operations in JAX's
order, so a key gives JAX's values (bit for bit where ``numxla.random``'s
sampler is).  The default dtype is JAX's default float (f32, f64 with x64)."""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.dtypes import canonical_type

from .. import random
from ..scipy._util import default_float

__all__ = [
    "Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
    "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal",
    "lecun_uniform", "lecun_normal", "he_uniform", "he_normal", "kaiming_uniform",
    "kaiming_normal", "orthogonal", "delta_orthogonal",
]

Initializer = Callable[..., Any]


def _dtype(dtype: Any) -> np.dtype:
    return default_float() if dtype is None else canonical_type(dtype).numpy_dtype


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def _const(value: Any, dtype: np.dtype) -> Any:
    """``jnp.array(value, dtype)``."""
    return xnp.asarray(value, dtype)


def _is_complex(dtype: np.dtype) -> bool:
    return np.issubdtype(dtype, np.complexfloating)


def _real(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.array(0, dtype).real.dtype)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of zeros (the key is unused)."""
    return xnp.zeros(_shape(shape), _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of ones (the key is unused)."""
    return xnp.ones(_shape(shape), _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer of arrays filled with ``value``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        return xnp.full(_shape(shape), value, dtype=_dtype(dtype))
    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer of uniform values in ``[0, scale)``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        dtype = _dtype(dtype)
        return random.uniform(key, _shape(shape), dtype) * _const(scale, dtype)
    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer of normal values with standard deviation ``stddev``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        dtype = _dtype(dtype)
        return random.normal(key, _shape(shape), dtype) * _const(stddev, dtype)
    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """An initializer of ``stddev`` times normal values truncated to ``[lower, upper]``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        dtype = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, _shape(shape), dtype) * \
            _const(stddev, dtype)
    return init


def _compute_fans(shape: tuple[int, ...], in_axis: int | Sequence[int] = -2,
                  out_axis: int | Sequence[int] = -1,
                  batch_axis: int | Sequence[int] = ()) -> tuple[float, float]:
    """Fan-in and fan-out of a weights shape: the in/out axes' sizes times the
    receptive field (the remaining, non-batch, axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         f"weights tensor with default in_axis. Must be at least 2D or specify "
                         f"in_axis explicitly.")

    def size(axes: int | Sequence[int]) -> int:
        return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)

    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def _complex_uniform(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Uniform on the unit-variance disk: ``sqrt(2 u) exp(2 pi i v)``."""
    key_r, key_theta = random.split(key)
    real = _real(dtype)
    r = xnp.sqrt(2 * random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * xnp.exp(1j * theta)


def _complex_truncated_normal(key: Any, upper: Any, shape: tuple[int, ...],
                              dtype: np.dtype) -> Any:
    """A complex normal with modulus truncated at ``upper``."""
    key_r, key_theta = random.split(key)
    real = _real(dtype)
    t = (1 - xnp.exp(_const(-upper ** 2, dtype))) * \
        random.uniform(key_r, shape, real).astype(dtype)
    r = xnp.sqrt(-xnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * xnp.exp(1j * theta)


_MODES = {
    "fan_in": lambda fan_in, fan_out: fan_in,
    "fan_out": lambda fan_in, fan_out: fan_out,
    "fan_avg": lambda fan_in, fan_out: (fan_in + fan_out) / 2,
    "fan_geo_avg": lambda fan_in, fan_out: (fan_in * fan_out) ** 0.5,
}


def variance_scaling(scale: Any, mode: str, distribution: str,
                     in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                     batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
    """An initializer of variance ``scale / n`` (``n`` by ``mode``: fan_in,
    fan_out, fan_avg, fan_geo_avg) from ``distribution``: "truncated_normal"
    (at two standard deviations, rescaled to the variance), "normal" or "uniform"."""
    if mode not in _MODES:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in ("truncated_normal", "normal", "uniform"):
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        variance = _const(scale / _MODES[mode](fan_in, fan_out), dtype)
        if distribution == "truncated_normal":
            if not _is_complex(dtype):
                stddev = xnp.sqrt(variance) / _const(0.8796256610342398, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = xnp.sqrt(variance) / _const(0.9531116438049121, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * xnp.sqrt(variance)
        if not _is_complex(dtype):
            return random.uniform(key, shape, dtype, -1) * xnp.sqrt(3 * variance)
        return _complex_uniform(key, shape, dtype) * xnp.sqrt(variance)
    return init


def _named(scale: float, mode: str, distribution: str, name: str, doc: str) -> Callable:
    def make(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
             batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    make.__name__ = make.__qualname__ = name
    make.__doc__ = doc
    return make


glorot_uniform = xavier_uniform = _named(1.0, "fan_avg", "uniform", "glorot_uniform",
                                         "Glorot/Xavier uniform: variance 2 / (fan_in + fan_out).")
glorot_normal = xavier_normal = _named(1.0, "fan_avg", "truncated_normal", "glorot_normal",
                                       "Glorot/Xavier (truncated) normal: variance "
                                       "2 / (fan_in + fan_out).")
lecun_uniform = _named(1.0, "fan_in", "uniform", "lecun_uniform",
                       "LeCun uniform: variance 1 / fan_in.")
lecun_normal = _named(1.0, "fan_in", "truncated_normal", "lecun_normal",
                      "LeCun (truncated) normal: variance 1 / fan_in.")
he_uniform = kaiming_uniform = _named(2.0, "fan_in", "uniform", "he_uniform",
                                      "He/Kaiming uniform: variance 2 / fan_in.")
he_normal = kaiming_normal = _named(2.0, "fan_in", "truncated_normal", "he_normal",
                                    "He/Kaiming (truncated) normal: variance 2 / fan_in.")


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of (semi-)orthogonal matrices: the other axes flattened
    into rows, ``column_axis`` the columns, times ``scale``."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return xnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = xnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
        q = xnp.moveaxis(q, -1, column_axis)
        return _const(scale, dtype) * q
    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer of 3-5D convolution kernels: zero but for an orthogonal
    matrix at the spatial centre (delta-orthogonal, Xiao et al. 2018)."""
    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None) -> Any:
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        spatial = shape[:-2]
        centre = [(k - 1) // 2 for k in spatial]
        block = xnp.reshape(matrix, (1,) * len(spatial) + shape[-2:])
        return lax.dynamic_update_slice(xnp.zeros(shape, dtype), block, centre + [0, 0])
    return init
