"""``numxla.random``'s samplers that transform uniform or normal draws:
``exponential``, ``laplace``, ``logistic``, ``cauchy``, ``rademacher``,
``truncated_normal``, ``maxwell``, ``double_sided_maxwell``, ``pareto``,
``rayleigh``, ``weibull_min``, ``lognormal``, ``geometric``, ``triangular`` and
``wald``, each JAX's formula on the same draws."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.dtypes import canonical_type
from numxla.tracer.core import abstractify

from ._random_core import (_as, _default, _dims, _dtype, _exponential, _full, _nextafter,
                           _normal_real, _param_shape, _shape, _split, _uniform)
from ._random_keys import check_key
from ._random_xla_math import erf_inv, xla_erf, xla_log, xla_log1p

__all__ = ["exponential", "laplace", "logistic", "cauchy", "rademacher", "truncated_normal",
           "maxwell", "double_sided_maxwell", "pareto", "rayleigh", "weibull_min", "lognormal",
           "geometric", "triangular", "wald"]


def _float_sampler(name: str, key: Any, shape: Any, dtype: Any) -> tuple[Any, tuple, np.dtype]:
    return check_key(name, key), _shape(shape), _dtype(name, dtype, "f")


def exponential(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Exponential(1) values: ``-log1p(-u)``."""
    key, shape, dtype = _float_sampler("exponential", key, shape, dtype)
    return _exponential(key, shape, dtype)


def laplace(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Laplace(0, 1) values: ``sign(u) * log1p(-|u|)``, ``u`` uniform on (-1, 1)."""
    key, shape, dtype = _float_sampler("laplace", key, shape, dtype)
    u = _uniform(key, shape, dtype, -1.0 + np.finfo(dtype).epsneg, 1.0)
    return lax.mul(lax.sign(u), xla_log1p(lax.neg(lax.abs(u))))


def logistic(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Logistic(0, 1) values: ``log(u) - log1p(-u)``."""
    key, shape, dtype = _float_sampler("logistic", key, shape, dtype)
    u = _uniform(key, shape, dtype, np.finfo(dtype).tiny, 1.0)
    return lax.sub(xla_log(u), xla_log1p(lax.neg(u)))


def cauchy(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard Cauchy values: ``tan(pi * (u - 1/2))``."""
    key, shape, dtype = _float_sampler("cauchy", key, shape, dtype)
    u = _uniform(key, shape, dtype, np.finfo(dtype).eps, 1.0)
    centred = lax.sub(u, _full(dtype.type(0.5), shape))
    return lax.tan(lax.mul(_full(dtype.type(np.pi), shape), centred))


def rademacher(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """+1 or -1 with equal probability (default int dtype)."""
    key = check_key("rademacher", key)
    dtype = _default("i") if dtype is None else canonical_type(dtype).numpy_dtype
    shape = _shape(shape)
    b = lax.convert_element_type(
        lax.lt(_uniform(key, shape, np.dtype(np.float32), 0.0, 1.0), _full(np.float32(0.5), shape)),
        dtype)
    return lax.sub(lax.mul(_full(dtype.type(2), shape), b), _full(dtype.type(1), shape))


def truncated_normal(key: Any, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Any:
    """Normal values conditioned on ``lower < x < upper``: the inverse CDF of a
    uniform between the bounds' CDFs, clipped inside the open interval.
    Differentiable w.r.t. the bounds."""
    key = check_key("truncated_normal", key)
    dtype = _dtype("truncated_normal", dtype, "f")
    shape = _param_shape("truncated_normal", shape, lower=lower, upper=upper)
    lower, upper = _as(lower, dtype), _as(upper, dtype)
    sqrt2 = dtype.type(np.sqrt(2))
    # XLA turns the division by the constant sqrt(2) into a multiplication
    # by its reciprocal.
    inv_sqrt2 = dtype.type(1) / sqrt2
    a, b = (xla_erf(lax.mul(v, _full(inv_sqrt2, _dims(v)))) for v in (lower, upper))
    u = _uniform(key, shape, dtype, a, b)
    out = lax.mul(_full(sqrt2, shape), erf_inv(u))
    lo = _full(_nextafter(lax.stop_gradient(lower), up=True), shape)
    hi = _full(_nextafter(lax.stop_gradient(upper), up=False), shape)
    return lax.min(lax.max(out, lo), hi)


def maxwell(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Maxwell values: the norm of a 3-vector of standard normals."""
    key, shape, dtype = _float_sampler("maxwell", key, shape, dtype)
    n = _normal_real(key, (*shape, 3), dtype)
    return lax.sqrt(lax.reduce_sum(lax.mul(n, n), (len(shape),)))


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Sequence[int] = (),
                         dtype: Any = None) -> Any:
    """``rademacher * maxwell * scale + loc``, of ``shape + broadcast(loc, scale)``."""
    key, shape, dtype = _float_sampler("double_sided_maxwell", key, shape, dtype)
    params = xnp.broadcast_shapes(_dims(loc), _dims(scale))
    shape = (shape or params) + params
    k_m, k_r = _split(key)
    m = maxwell(k_m, shape, dtype)
    r = rademacher(k_r, shape, dtype)
    return lax.add(lax.mul(lax.mul(r, m), _full(_as(scale, dtype), shape)),
                   _full(_as(loc, dtype), shape))


def pareto(key: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Pareto(b) values: ``exp(exponential / b)``."""
    key = check_key("pareto", key)
    dtype = _dtype("pareto", dtype, "f")
    shape = _param_shape("pareto", shape, b=b)
    e = _exponential(key, shape, dtype)
    return lax.exp(lax.div(e, _full(_as(b, dtype), shape)))


def rayleigh(key: Any, scale: Any = 1.0, shape: Sequence[int] | None = None,
             dtype: Any = None) -> Any:
    """Rayleigh values: ``scale * sqrt(-2 log u)``."""
    key = check_key("rayleigh", key)
    dtype = _dtype("rayleigh", dtype, "f")
    shape = _param_shape("rayleigh", shape, scale=scale)
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    r = lax.sqrt(lax.mul(xla_log(u), _full(dtype.type(-2), shape)))
    return lax.mul(_full(_as(scale, dtype), shape), r)


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Sequence[int] = (),
                dtype: Any = None) -> Any:
    """Weibull values: ``scale * (-log1p(-u)) ** (1 / concentration)``."""
    key, shape, dtype = _float_sampler("weibull_min", key, shape, dtype)
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    e = lax.neg(xla_log1p(lax.neg(u)))
    power = lax.div(_full(dtype.type(1), shape), _full(_as(concentration, dtype), shape))
    return lax.mul(lax.pow(e, power), _full(_as(scale, dtype), shape))


def lognormal(key: Any, sigma: Any = 1.0, shape: Sequence[int] | None = None,
              dtype: Any = None) -> Any:
    """``exp(sigma * normal)``."""
    key = check_key("lognormal", key)
    dtype = _dtype("lognormal", dtype, "f")
    shape = _param_shape("lognormal", shape, sigma=sigma)
    return lax.exp(lax.mul(_normal_real(key, shape, dtype), _full(_as(sigma, dtype), shape)))


def geometric(key: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Trials until the first success: ``floor(log(u) / log1p(-p)) + 1``."""
    key = check_key("geometric", key)
    dtype = _dtype("geometric", dtype, "i")
    shape = _param_shape("geometric", shape, p=p)
    p = xnp.asarray(p)
    ptype = abstractify(p).dtype
    ftype = ptype if np.issubdtype(ptype, np.floating) else _default("f")
    u = _uniform(key, shape, ftype, 0.0, 1.0)
    u = lax.select(lax.eq(u, _full(ftype.type(0), shape)), _full(ftype.type(1), shape), u)
    log_q = _full(xla_log1p(lax.neg(_as(p, ftype))), shape)
    g = lax.add(lax.floor(lax.div(xla_log(u), log_q)), _full(ftype.type(1), shape))
    return lax.convert_element_type(g, dtype)


def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
               dtype: Any = None) -> Any:
    """Triangular(left, mode, right) values by the inverse CDF."""
    key = check_key("triangular", key)
    dtype = _dtype("triangular", dtype, "f")
    shape = _param_shape("triangular", shape, left=left, mode=mode, right=right)
    left, mode, right = (_full(_as(v, dtype), shape) for v in (left, mode, right))
    u = _uniform(key, shape, dtype, 0.0, 1.0)
    width = lax.sub(right, left)
    cut = lax.div(lax.sub(mode, left), width)
    low = lax.add(left, lax.sqrt(lax.mul(lax.mul(u, width), lax.sub(mode, left))))
    one = _full(dtype.type(1), shape)
    high = lax.sub(right, lax.sqrt(lax.mul(lax.mul(lax.sub(one, u), width), lax.sub(right, mode))))
    return lax.select(lax.lt(u, cut), low, high)


def wald(key: Any, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) values with unit scale (Michael-Schucany-Haas)."""
    key = check_key("wald", key)
    dtype = _dtype("wald", dtype, "f")
    shape = _param_shape("wald", shape, mean=mean)
    k1, k2 = _split(key)
    c = lambda v: _full(dtype.type(v), shape)  # noqa: E731
    mean = _full(_as(mean, dtype), shape)
    v = _normal_real(k1, shape, dtype)
    z = _uniform(k2, shape, dtype, 0.0, 1.0)
    y = lax.mul(v, v)
    mean_sq = lax.mul(mean, mean)
    root = lax.sqrt(lax.add(lax.mul(lax.mul(c(4), mean), y), lax.mul(mean_sq, lax.mul(y, y))))
    x = lax.sub(lax.add(mean, lax.div(lax.mul(mean_sq, y), c(2))),
                lax.mul(lax.div(mean, c(2)), root))
    return lax.select(lax.le(z, lax.div(mean, lax.add(mean, x))), x, lax.div(mean_sq, x))
