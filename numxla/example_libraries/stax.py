"""``jax.example_libraries.stax``: neural-network layers as ``(init_fun,
apply_fun)`` pairs.

``init_fun(rng, input_shape) -> (output_shape, params)`` (a dimension may
be -1, e.g. the batch size), ``apply_fun(params, inputs, **kwargs) ->
outputs`` (``rng=`` for ``Dropout``).  Combinators (``serial``,
``parallel``, ``FanOut``...) build networks from layers.
"""
from __future__ import annotations

import functools
import operator as op
from typing import Any, Callable

import numxla.primitives as lax
import numxla.primitives.numpy as jnp
from numxla import random
from numxla.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                       softplus, standardize)
from numxla.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = ["Dense", "GeneralConv", "Conv", "GeneralConvTranspose", "Conv1DTranspose",
           "ConvTranspose", "BatchNorm", "elementwise", "Tanh", "Relu", "Exp", "LogSoftmax",
           "Softmax", "Softplus", "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "MaxPool",
           "SumPool", "AvgPool", "Flatten", "Identity", "FanOut", "FanInSum", "FanInConcat",
           "Dropout", "serial", "parallel", "shape_dependent", "glorot", "randn"]

glorot = glorot_normal
randn = normal


# -- layers -----------------------------------------------------------------------------------

def Dense(out_dim: int, W_init: Callable = glorot_normal(), b_init: Callable = normal()) -> tuple:
    """A fully connected layer: ``inputs @ W + b``."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = random.split(rng)
        W, b = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return output_shape, (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return jnp.dot(inputs, W) + b
    return init_fun, apply_fun


def _kernel_shape(dimension_numbers: Any, out_chan: int, filter_shape: Any,
                  input_shape: tuple) -> list[int]:
    lhs_spec, rhs_spec, _ = dimension_numbers
    filter_shape_iter = iter(filter_shape)
    return [out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I"
            else next(filter_shape_iter) for c in rhs_spec]


def GeneralConv(dimension_numbers: Any, out_chan: int, filter_shape: Any, strides: Any = None,
                padding: Any = "VALID", W_init: Callable | None = None,
                b_init: Callable = normal(1e-6)) -> tuple:
    """A convolution layer with the given dimension specs (e.g. NHWC/HWIO/NHWC)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        output_shape = lax.conv_general_shape_tuple(input_shape, kernel_shape, strides, padding,
                                                    dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return lax.conv_general_dilated(inputs, W, strides, padding, one, one,
                                        dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers: Any, out_chan: int, filter_shape: Any,
                         strides: Any = None, padding: Any = "VALID",
                         W_init: Callable | None = None, b_init: Callable = normal(1e-6)) -> tuple:
    """A transposed convolution layer with the given dimension specs."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = strides or one
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        output_shape = lax.conv_transpose_shape_tuple(input_shape, kernel_shape, strides,
                                                      padding, dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        W, b = W_init(k1, kernel_shape), b_init(k2, bias_shape)
        return output_shape, (W, b)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return lax.conv_transpose(inputs, W, strides, padding,
                                  dimension_numbers=dimension_numbers) + b
    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis: Any = (0, 1, 2), epsilon: float = 1e-5, center: bool = True,
              scale: bool = True, beta_init: Callable = zeros, gamma_init: Callable = ones
              ) -> tuple:
    """Batch normalization over ``axis`` (statistics of the batch itself)."""
    def _beta_init(rng: Any, shape: tuple) -> Any:
        return beta_init(rng, shape) if center else ()

    def _gamma_init(rng: Any, shape: tuple) -> Any:
        return gamma_init(rng, shape) if scale else ()
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        return input_shape, (_beta_init(k1, shape), _gamma_init(k2, shape))

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        ed = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[ed] * z + beta[ed]
        if center:
            return z + beta[ed]
        if scale:
            return gamma[ed] * z
        return z
    return init_fun, apply_fun


def elementwise(fun: Callable, **fun_kwargs: Any) -> tuple:
    """A layer that applies ``fun`` to its inputs, element-wise."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _pooling_layer(reducer: Callable, init_val: Any, rescaler: Callable | None = None
                   ) -> Callable[..., tuple]:
    def PoolingLayer(window_shape: tuple, strides: tuple | None = None, padding: str = "VALID",
                     spec: str | None = None) -> tuple:
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial_axes = (0, len(window_shape) + 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial_axes):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng: Any, input_shape: tuple) -> tuple:
            padding_vals = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones_ = (1,) * len(window_shape)
            out_shape = lax.reduce_window_shape_tuple(input_shape, window_shape, strides,
                                                      padding_vals, ones_, ones_)
            return out_shape, ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out
        return init_fun, apply_fun
    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)


def _normalize_by_window_size(dims: tuple, strides: tuple, padding: str) -> Callable:
    def rescale(outputs: Any, inputs: Any, spec: str | None) -> Any:
        non_spatial_axes = (0, inputs.ndim - 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                              if i not in non_spatial_axes)
        one = jnp.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = lax.reduce_window(one, 0., lax.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = jnp.expand_dims(window_sizes, i)
        return outputs / window_sizes
    return rescale


AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


def _flatten() -> tuple:
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return (input_shape[0], functools.reduce(op.mul, input_shape[1:], 1)), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.reshape(inputs, (inputs.shape[0], -1))
    return init_fun, apply_fun


Flatten = _flatten()


def _identity() -> tuple:
    return (lambda rng, input_shape: (input_shape, ())), \
        (lambda params, inputs, **kwargs: inputs)


Identity = _identity()


def FanOut(num: int) -> tuple:
    """A layer that gives ``num`` copies of its input."""
    return (lambda rng, input_shape: ([input_shape] * num, ())), \
        (lambda params, inputs, **kwargs: [inputs] * num)


def _fan_in_sum() -> tuple:
    return (lambda rng, input_shape: (input_shape[0], ())), \
        (lambda params, inputs, **kwargs: sum(inputs))


FanInSum = _fan_in_sum()


def FanInConcat(axis: int = -1) -> tuple:
    """A layer that concatenates its inputs along ``axis``."""
    def init_fun(rng: Any, input_shape: Any) -> tuple:
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        return input_shape[0][:ax] + (concat_size,) + input_shape[0][ax + 1:], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return jnp.concatenate(inputs, axis)
    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> tuple:
    """Dropout keeping each input with probability ``rate`` (``apply_fun``
    needs ``rng=``); ``mode`` other than "train" is the identity."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call it "
                             "like `apply_fun(params, inputs, rng)` where `rng` is a PRNG key "
                             "(e.g. from `jax.random.key`).")
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs
    return init_fun, apply_fun


# -- combinators ------------------------------------------------------------------------------

def _layer_rngs(kwargs: dict, nlayers: int) -> Any:
    """One key per layer from the ``rng`` keyword (taken out of ``kwargs``), or Nones."""
    rng = kwargs.pop("rng", None)
    return random.split(rng, nlayers) if rng is not None else (None,) * nlayers


def serial(*layers: tuple) -> tuple:
    """The layers one after the other."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng: Any, input_shape: Any) -> tuple:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rngs = _layer_rngs(kwargs, nlayers)
        for fun, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = fun(param, inputs, rng=layer_rng, **kwargs)
        return inputs
    return init_fun, apply_fun


def parallel(*layers: tuple) -> tuple:
    """The layers side by side, each on its own input of a sequence."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng: Any, input_shape: Any) -> Any:
        rngs = random.split(rng, nlayers)
        return zip(*[init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rngs = _layer_rngs(kwargs, nlayers)
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]
    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[tuple], tuple]) -> tuple:
    """A layer built from its input's shape by ``make_layer(shape)``."""
    def init_fun(rng: Any, input_shape: tuple) -> tuple:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)
    return init_fun, apply_fun
