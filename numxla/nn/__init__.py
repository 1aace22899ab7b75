"""``jax.nn`` for numxla: activations, softmax and friends, ``one_hot``,
``standardize``, ``dot_product_attention`` and ``initializers``, with JAX's
formulas (so JAX's dtypes and numerics: ``softplus`` is ``logaddexp(x, 0)``,
``gelu`` is the tanh approximation unless ``approximate=False``, the softmaxes
subtract the constant maximum) and JAX's derivatives: ``relu``/``relu6`` are
``custom_jvp`` functions whose derivative is 0 at the kinks, as JAX's.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff.custom import custom_jvp

from ..scipy._util import (axes_of, default_float, dtype_of, logaddexp, logsumexp, masked,
                           promote_inexact, quiet)
from . import initializers  # noqa: F401
from ._attention import dot_product_attention

__all__ = [
    "celu", "elu", "gelu", "glu", "hard_sigmoid", "hard_silu", "hard_swish", "hard_tanh",
    "leaky_relu", "log_sigmoid", "log_softmax", "logmeanexp", "logsumexp", "standardize",
    "normalize", "one_hot", "relu", "identity", "relu6", "dot_product_attention", "selu",
    "sigmoid", "soft_sign", "softmax", "softplus", "sparse_plus", "sparse_sigmoid", "silu",
    "swish", "squareplus", "mish", "log1mexp", "tanh", "initializers",
]

tanh = xnp.tanh


def _array(x: Any) -> Any:
    return np.asarray(x) if isinstance(x, (list, tuple)) else x


def identity(x: Any) -> Any:
    """``x`` unchanged."""
    return _array(x)


# --------------------------------------------------------------------------
# activations with JAX's derivative at the kinks
# --------------------------------------------------------------------------

@custom_jvp
def relu(x: Any) -> Any:
    """``max(x, 0)``; its derivative at 0 is 0."""
    return xnp.maximum(_array(x), 0)


relu.defjvps(lambda g, ans, x: xnp.where(xnp.greater(x, 0), g, xnp.zeros_like(g)))


@custom_jvp
def relu6(x: Any) -> Any:
    """``min(max(x, 0), 6)``; its derivative at 0 and 6 is 0."""
    return xnp.minimum(xnp.maximum(_array(x), 0), 6.0)


relu6.defjvps(lambda g, ans, x: xnp.where(xnp.greater(x, 0) & xnp.less(x, 6), g,
                                          xnp.zeros_like(g)))


# --------------------------------------------------------------------------
# element-wise activations
# --------------------------------------------------------------------------

def sigmoid(x: Any) -> Any:
    """``1 / (1 + exp(-x))`` (XLA's logistic)."""
    (x,) = promote_inexact(x)
    return lax.logistic(x)


@quiet
def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, as ``logaddexp(x, 0)``."""
    return logaddexp(_array(x), 0)


def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x))`` as ``-softplus(-x)``."""
    return -softplus(-xnp.asarray(_array(x)))


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (also ``swish``)."""
    x = _array(x)
    return x * sigmoid(x)


swish = silu


def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))``."""
    x = _array(x)
    return x * xnp.tanh(softplus(x))


@quiet
def squareplus(x: Any, b: Any = 4) -> Any:
    """``(x + sqrt(x^2 + b)) / 2``."""
    x, b = _array(x), _array(b)
    return (x + xnp.sqrt(xnp.square(x) + b)) / 2


def sparse_plus(x: Any) -> Any:
    """0 below -1, ``(x + 1)^2 / 4`` on (-1, 1), ``x`` from 1."""
    x = xnp.asarray(_array(x))
    return xnp.where(x <= -1.0, 0.0, xnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Any:
    """``clip((x + 1) / 2, 0, 1)``: the derivative of ``sparse_plus``."""
    return 0.5 * xnp.clip(_array(x) + 1.0, 0.0, 2.0)


@quiet
def soft_sign(x: Any) -> Any:
    """``x / (|x| + 1)``."""
    x = _array(x)
    return x / (xnp.abs(x) + 1)


@quiet
def elu(x: Any, alpha: Any = 1.0) -> Any:
    """``x`` above 0, ``alpha * (exp(x) - 1)`` at or below."""
    x = xnp.asarray(_array(x))
    return xnp.where(x > 0, x, alpha * xnp.expm1(xnp.where(x > 0, 0.0, x)))


def leaky_relu(x: Any, negative_slope: Any = 0.01) -> Any:
    """``x`` at or above 0, ``negative_slope * x`` below."""
    x = xnp.asarray(_array(x))
    return xnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    """``x`` clipped to [-1, 1]."""
    x = xnp.asarray(_array(x))
    return xnp.where(x > 1, 1, xnp.where(x < -1, -1, x))


@quiet
def celu(x: Any, alpha: Any = 1.0) -> Any:
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    x = _array(x)
    return xnp.maximum(x, 0.0) + alpha * xnp.expm1(xnp.minimum(x, 0.0) / alpha)


def selu(x: Any) -> Any:
    """``scale * elu(x, alpha)`` with the self-normalizing constants."""
    return 1.0507009873554805 * elu(x, 1.6732632423543772)


def hard_sigmoid(x: Any) -> Any:
    """``relu6(x + 3) / 6``."""
    return relu6(_array(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """``x * hard_sigmoid(x)`` (also ``hard_swish``)."""
    x = _array(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


@quiet
def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit: ``x * Phi(x)``, by default with JAX's
    tanh approximation; ``approximate=False`` uses ``erfc``."""
    (x,) = promote_inexact(x)
    dtype = dtype_of(x).type
    if approximate:
        cdf = 0.5 * (1.0 + xnp.tanh(dtype(np.sqrt(2 / np.pi)) * (x + 0.044715 * (x * x * x))))
        return x * cdf
    return (0.5 * x * lax.erfc(-x * dtype(np.sqrt(0.5)))).astype(dtype_of(x))


def glu(x: Any, axis: int = -1) -> Any:
    """The gated linear unit: the first half of ``x`` along ``axis`` times
    the sigmoid of the second."""
    x = xnp.asarray(_array(x))
    assert x.shape[axis] % 2 == 0, "axis size must be divisible by 2"
    x1, x2 = xnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


@custom_jvp
@quiet
def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` for x >= 0, accurate at both ends."""
    x = xnp.asarray(_array(x))
    return xnp.where(x < float(np.log(2.0)), xnp.log(-xnp.expm1(-x)), xnp.log1p(-xnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / xnp.expm1(x))


# --------------------------------------------------------------------------
# softmax, log_softmax, standardize, one_hot
# --------------------------------------------------------------------------

def _max(x: Any, axes: tuple[int, ...], where: Any, initial: Any) -> Any:
    """``max`` over ``axes`` of the ``where`` elements and ``initial`` (kept dims)."""
    out = xnp.max(masked(x, where, -np.inf), axes, keepdims=True)
    return out if initial is None or (np.ndim(initial) == 0 and initial == -np.inf) \
        else xnp.maximum(out, initial)


@quiet
def log_softmax(x: Any, axis: int | Sequence[int] | None = -1, where: Any = None) -> Any:
    """``x - logsumexp(x)`` over ``axis``: ``-inf`` where ``where`` is False."""
    x = xnp.asarray(_array(x))
    axes = axes_of(x, axis)
    x_max = _max(x, axes, where, None)
    shifted = masked(x, where, -np.inf) - lax.stop_gradient(x_max)
    shifted_lse = xnp.log(xnp.sum(masked(xnp.exp(shifted), where, 0), axes, keepdims=True))
    return masked(shifted - shifted_lse, where, -np.inf)


@quiet
def softmax(x: Any, axis: int | Sequence[int] | None = -1, where: Any = None,
            initial: Any = -np.inf) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis``: 0 where ``where`` is False.
    (``initial`` joins the maximum subtracted first, as in older JAX.)"""
    x = xnp.asarray(_array(x))
    axes = axes_of(x, axis)
    x_max = _max(x, axes, where, initial)
    unnormalized = xnp.exp(masked(x, where, initial) - lax.stop_gradient(x_max))
    result = unnormalized / xnp.sum(masked(unnormalized, where, 0), axes, keepdims=True)
    return masked(result, where, 0)


def _mean(x: Any, axes: tuple[int, ...], where: Any) -> Any:
    if where is None:
        return xnp.mean(x, axes, keepdims=True)
    count = xnp.sum(xnp.broadcast_to(where, xnp.shape(x)), axes, keepdims=True)
    return xnp.sum(masked(x, where, 0), axes, keepdims=True) / count.astype(dtype_of(x))


@quiet
def standardize(x: Any, axis: int | Sequence[int] | None = -1, mean: Any = None,
                variance: Any = None, epsilon: Any = 1e-5, where: Any = None, *,
                algorithm: str = "fast") -> Any:
    """``(x - mean) / sqrt(variance + epsilon)`` over ``axis``; ``algorithm``
    "fast" (``E[x^2] - E[x]^2``, JAX's default) or "stable" (two-pass)."""
    x = xnp.asarray(_array(x))
    axes = axes_of(x, axis)
    if mean is None:
        mean = _mean(x, axes, where)
    if variance is None:
        if algorithm == "stable":
            variance = _mean(xnp.square(x - mean), axes, where)
        elif algorithm == "fast":
            variance = xnp.maximum(_mean(xnp.square(x), axes, where) - xnp.square(mean), 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return (x - mean) * lax.rsqrt(variance + epsilon)


normalize = standardize  # JAX's old name


@quiet
def logmeanexp(x: Any, axis: int | Sequence[int] | None = None, where: Any = None,
               keepdims: bool = False) -> Any:
    """``logsumexp(x) - log(n)``: the log of the mean of ``exp(x)``."""
    x = xnp.asarray(_array(x))
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    axes = axes_of(x, axis)
    if where is None:
        count = float(np.prod([x.shape[a] for a in axes]))
    else:
        count = xnp.sum(xnp.broadcast_to(where, x.shape), axes, keepdims=keepdims)
    return lse - xnp.log(xnp.asarray(count, dtype_of(lse)))


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """``x``'s integers as one-hot vectors of ``num_classes`` along ``axis``
    (out-of-range indices give all zeros); default float dtype."""
    x = xnp.asarray(_array(x))
    num_classes = int(num_classes)
    dtype = default_float() if dtype is None else dtype
    out_axis = axis % (x.ndim + 1)
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    classes = xnp.reshape(xnp.arange(num_classes, dtype=dtype_of(x)), rhs_shape)
    return xnp.equal(xnp.expand_dims(x, out_axis), classes).astype(dtype)
