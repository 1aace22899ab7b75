"""The benchmark workloads of issues 4 and 5, written once against a jax.lax-style
module pair, so the same definition runs with numxla (``primitives`` and
``primitives.numpy``) and with JAX (``jax.lax`` and ``jax.numpy``)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass(frozen=True)
class Workload:
    name: str
    build: Callable[[Any, Any], Callable]  # (lax, xnp) -> function to jit
    inputs: Callable[[], tuple]            # NumPy inputs
    layouts: Any = None                    # numxla in_layouts (JAX gets row-major arrays)
    numpy: bool = True                     # build(None, numpy) runs as plain NumPy


def elementwise(lax, xnp):
    def f(x):
        return xnp.tanh(2 * x + 1) * xnp.exp(-x) + 0.5 * xnp.sin(x)
    return f


def row_sums(lax, xnp):
    return lambda x: xnp.sum(x, axis=1)


def col_sums(lax, xnp):
    return lambda x: xnp.sum(x, axis=0)


def matmul(lax, xnp):
    return lambda a, b: a @ b


def log_softmax(xnp, logits):
    shifted = logits - xnp.max(logits, axis=1, keepdims=True)
    return shifted - xnp.log(xnp.sum(xnp.exp(shifted), axis=1, keepdims=True))


def mlp_forward(lax, xnp):
    def f(params, x):
        h = x
        for w, b in params[:-1]:
            h = xnp.tanh(h @ w + b)
        w, b = params[-1]
        return log_softmax(xnp, h @ w + b)
    return f


def batch_norm(lax, xnp, x, scale, offset, epsilon=1e-5):
    """batch_norm_training over NHWC (feature_index 3): XLA's op where the
    module has it (numxla), its definition in reductions otherwise (JAX)."""
    if hasattr(lax, "batch_norm_training"):
        return lax.batch_norm_training(x, scale, offset, epsilon=epsilon, feature_index=3)[0]
    mean = xnp.mean(x, axis=(0, 1, 2))
    var = xnp.mean(xnp.square(x - mean), axis=(0, 1, 2))
    return (x - mean) * lax.rsqrt(var + epsilon) * scale + offset


def cnn_forward(lax, xnp):
    def f(params, x):
        y = lax.conv_general_dilated(x, params["conv"], (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y = batch_norm(lax, xnp, y, params["scale"], params["offset"])
        y = xnp.maximum(y, 0.0)
        y = lax.reduce_window(y, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        y = y.reshape(y.shape[0], -1)
        return y @ params["dense"] + params["bias"]
    return f


def _value_and_grad(lax):
    """The module pair's own value_and_grad: JAX's, or numxla's autodiff."""
    if lax.__name__.startswith("jax"):
        import jax
        return jax.value_and_grad
    from numxla.autodiff import value_and_grad
    return value_and_grad


def mlp_train_step(lax, xnp):
    """jit(value_and_grad(loss)) of the MLP forward: mean cross-entropy
    against one-hot labels; returns the loss and the gradient of every weight."""
    forward = mlp_forward(lax, xnp)

    def loss(params, x, one_hot):
        return -xnp.sum(forward(params, x) * one_hot) / x.shape[0]
    return _value_and_grad(lax)(loss)


def cnn_train_step(lax, xnp):
    """jit(value_and_grad(loss)) of the CNN forward (conv, batch norm, relu,
    max pool, dense): mean cross-entropy against one-hot labels."""
    forward = cnn_forward(lax, xnp)

    def loss(params, x, one_hot):
        return -xnp.sum(log_softmax(xnp, forward(params, x)) * one_hot) / x.shape[0]
    return _value_and_grad(lax)(loss)


def _one_hot(n, classes=10):
    return np.eye(classes, dtype=np.float32)[_rng().integers(0, classes, n)]


def call_overhead(lax, xnp):
    return lambda x: x * 2 + 1


def _rng():
    return np.random.default_rng(0)


def _f32(*shape):
    return _rng().standard_normal(shape).astype(np.float32)


def mlp_params(sizes=(784, 512, 512, 10)):
    rng = _rng()
    return [((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def cnn_params(channels=16, features=32, spatial=32):
    rng = _rng()
    return {"conv": (rng.standard_normal((3, 3, channels, features)) / 12).astype(np.float32),
            "scale": np.ones(features, np.float32), "offset": np.zeros(features, np.float32),
            "dense": (rng.standard_normal(((spatial // 2) ** 2 * features, 10)) / 90
                      ).astype(np.float32),
            "bias": np.zeros(10, np.float32)}


WORKLOADS = [
    Workload("elementwise 4M f32", elementwise, lambda: (_f32(4 * 1024 * 1024),)),
    Workload("row sums 2048^2 row-major", row_sums, lambda: (_f32(2048, 2048),)),
    Workload("col sums 2048^2 row-major", col_sums, lambda: (_f32(2048, 2048),)),
    Workload("row sums 2048^2 col-major", row_sums, lambda: (_f32(2048, 2048),), "{0,1}"),
    Workload("col sums 2048^2 col-major", col_sums, lambda: (_f32(2048, 2048),), "{0,1}"),
    Workload("matmul 1024^2 f32", matmul, lambda: (_f32(1024, 1024), _f32(1024, 1024))),
    Workload("MLP forward 256x784", mlp_forward, lambda: (mlp_params(), _f32(256, 784))),
    Workload("CNN forward 32x32x32x16", cnn_forward, lambda: (cnn_params(), _f32(32, 32, 32, 16)), numpy=False),
    Workload("call overhead x*2+1 (8)", call_overhead, lambda: (_f32(8),)),
    Workload("MLP train step 256x784", mlp_train_step,
             lambda: (mlp_params(), _f32(256, 784), _one_hot(256)), numpy=False),
    Workload("CNN train step 32x32x32x16", cnn_train_step,
             lambda: (cnn_params(), _f32(32, 32, 32, 16), _one_hot(32)), numpy=False),
]

# Issue 4's targets: the most numxla time / JAX time may be, per workload.
TARGETS = {
    "elementwise 4M f32": 0.35,
    "row sums 2048^2 row-major": 1.5, "col sums 2048^2 row-major": 1.5,
    "row sums 2048^2 col-major": 1.5, "col sums 2048^2 col-major": 1.5,
    "matmul 1024^2 f32": 1.1,
    "MLP forward 256x784": 1.0,
    "CNN forward 32x32x32x16": 1.2,
    "call overhead x*2+1 (8)": 1.0,
    "MLP train step 256x784": 1.0,          # issue 5
    "CNN train step 32x32x32x16": 1.2,      # issue 5
    "compile MLP forward, cold cache": 3.0,
    "compile MLP forward, warm cache": 0.5,   # against JAX's cold compile
}
