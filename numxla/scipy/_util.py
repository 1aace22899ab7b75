"""Helpers shared by ``numxla.scipy`` and ``numxla.nn``: JAX's argument
promotion (``promote_args_inexact``), the default float type, and
``logsumexp`` (JAX's ``jax._src.ops.special.logsumexp``, which both
``jax.nn`` and ``jax.scipy.special`` export)."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff.custom import custom_jvp
from numxla.primitives.dtypes import result_type
from numxla.primitives.elementwise import promote
from numxla.tracer.config import config
from numxla.tracer.core import abstractify


def default_float() -> np.dtype:
    """JAX's ``dtypes.default_float_dtype()``: f64 with x64 enabled, else f32."""
    return np.dtype(np.float64 if config.jax_enable_x64 else np.float32)


def dtype_of(x: Any) -> np.dtype:
    return abstractify(x).dtype


def promote_inexact(*args: Any) -> list[Any]:
    """The arguments in their common type, JAX's ``promote_args_inexact``:
    integers and booleans become the default float, and so do Python scalars
    alone (weak types, f64 with x64 as in JAX)."""
    args = [np.asarray(a) if isinstance(a, (list, tuple)) else a for a in args]
    t, weak = result_type(*args)
    if weak or not (t.is_floating or t.is_complex):
        wide = config.jax_enable_x64
        target = (np.complex128 if wide else np.complex64) if t.is_complex else default_float()
        return [lax.convert_element_type(a, target) for a in args]
    return list(promote(*args))


def quiet(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` with NumPy's floating-point warnings off: eagerly, compositions
    run NumPy arithmetic, which warns where XLA silently gives inf or NaN."""
    @functools.wraps(fun)
    def run(*args: Any, **kwargs: Any) -> Any:
        with np.errstate(all="ignore"):
            return fun(*args, **kwargs)
    return run


def _logaddexp(x1: Any, x2: Any) -> Any:
    return xnp.logaddexp(x1, x2)


_logaddexp_custom = custom_jvp(_logaddexp)


@_logaddexp_custom.defjvp
def _logaddexp_jvp(primals: tuple, tangents: tuple) -> tuple:
    """JAX's rule: each tangent weighted by ``exp(x_i - out)`` (1/2 each at a
    tie, where differentiating the composition's ``max`` and ``abs`` is not)."""
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp_custom(x1, x2)
    no_inf = lambda v: xnp.where(xnp.isposinf(v), 0, v)  # noqa: E731  (not inf - inf)
    return out, t1 * xnp.exp(no_inf(x1) - no_inf(out)) + t2 * xnp.exp(no_inf(x2) - no_inf(out))


def logaddexp(x1: Any, x2: Any) -> Any:
    """``log(exp(x1) + exp(x2))`` with JAX's derivative."""
    return _logaddexp_custom(*promote_inexact(x1, x2))


def axes_of(x: Any, axis: int | Sequence[int] | None) -> tuple[int, ...]:
    ndim = abstractify(x).ndim
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(int(a) % ndim if ndim else int(a) for a in axes)


def masked(x: Any, where: Any, fill: float) -> Any:
    return x if where is None else xnp.where(where, x, fill)


@quiet
def logsumexp(a: Any, axis: int | Sequence[int] | None = None, b: Any = None,
              keepdims: bool = False, return_sign: bool = False, where: Any = None) -> Any:
    """``log(sum(b * exp(a)))`` over ``axis``, shifted by the (constant) maximum;
    ``return_sign`` also gives the sign of the sum (for negative ``b``)."""
    if where is not None:
        a = xnp.where(where, a, 0)
    if b is not None:
        a, b = promote_inexact(a, b)
        a = xnp.where(xnp.not_equal(b, 0), a, -np.inf)
    else:
        (a,) = promote_inexact(a)
    axes = axes_of(a, axis)
    a_real = lax.real(a) if np.issubdtype(dtype_of(a), np.complexfloating) else a
    amax = xnp.max(masked(a_real, where, -np.inf), axes, keepdims=True)
    amax = lax.stop_gradient(xnp.where(xnp.isfinite(amax), amax, 0))
    exp_a = xnp.exp(a - amax.astype(dtype_of(a)))
    if b is not None:
        exp_a = exp_a * b
    sumexp = xnp.sum(masked(exp_a, where, 0), axes, keepdims=True)
    sign = xnp.sign(sumexp)
    if return_sign or not np.issubdtype(dtype_of(a), np.complexfloating):
        sumexp = xnp.abs(sumexp)
    out = xnp.log(sumexp) + amax.astype(dtype_of(sumexp))
    if not keepdims:
        out, sign = xnp.squeeze(out, axes), xnp.squeeze(sign, axes)
    if return_sign:
        return out, sign
    if b is not None and not np.issubdtype(dtype_of(out), np.complexfloating):
        out = xnp.where(sign < 0, np.asarray(np.nan, dtype_of(out)), out)
    return out
