"""``jax.random`` for numxla: JAX's names and signatures and, for the same key,
JAX 0.10.2's values on CPU (threefry2x32 with ``jax_threefry_partitionable``).

Keys come in JAX's two kinds: ``PRNGKey(seed)`` gives a raw ``uint32[2]``
array, ``key(seed)`` a typed key array (``key<fry>[]``, a ``KeyArray`` over
the same data; ``_random_keys`` explains the design). Every function takes
either, a typed key draws what the raw key of the same seed draws, and
``split``/``fold_in`` return keys of the kind they get; ``key_data`` and
``wrap_key_data`` convert. Keys pass through ``jit``, ``vmap``, ``scan`` and
``fori_loop`` (as arguments, results and carries) and pytrees; under ``grad``
they carry no tangent. The samplers are differentiable w.r.t. their float
parameters where JAX's are (``uniform``'s bounds, ``truncated_normal``'s,
``normal(k) * sigma``...), the gamma family (``gamma``, ``loggamma``,
``beta``, ``dirichlet``, ``t``, ``chisquare``, ``f``, ``generalized_normal``,
``ball``) through JAX's implicit reparameterization gradient, computed here
(``_random_gamma_grad``) to within 3e-6 of the exact derivative in f32.

Equal to JAX bit for bit (f32, fixed keys; ``tests/numxla/test_random.py``
checks vectors computed by JAX): the keys (``PRNGKey``/``key``, ``split``,
``fold_in``), ``bits``, ``uniform`` (any bounds), ``bernoulli``, ``randint``,
``permutation``, ``choice``, ``categorical``, ``rademacher``, and the counts
``binomial``, ``multinomial`` and ``poisson`` (floats or integers decided by
rejection tests on XLA-style logs: equal in every test vector, though a test
could in principle fall the other way at a last-bit tie). XLA:CPU's own
``log``/``log1p``/``erf``/``erf_inv`` are reproduced (``_random_xla_math``),
but by default not the FMAs LLVM makes of their polynomials' multiply-adds, so
(measured over 2**18 draws) ``normal`` and ``truncated_normal`` differ from
JAX in ~3-4% of values by at most 3 ulps, ``exponential``/``laplace`` in ~1.5%
by 1 ulp, ``logistic`` in 1% by at most 4, ``gumbel`` in 0.2% (mostly near 0),
``rayleigh`` in 0.07% by 1; the integer samplers built on them
(``categorical``, ``choice`` with ``p``) could differ only at a near-tie (none
in 10^4 test draws). With ``_random_xla_math.EXACT_FMA = True`` all of these
are bit-identical too, at ~10x the cost. Samplers using ``exp``, ``tan``,
``pow``, ``lgamma`` or a matrix factorization follow JAX's algorithm and key
use but not XLA's last bits (a rejection loop may then take another path):
the gamma family, ``generalized_normal`` and ``ball`` are within 1e-6
(relative) of JAX's values in the test vectors.

Default dtypes are JAX's without x64 (f32, i32, u32; f64/i64/u64 with
``numxla.config.update("jax_enable_x64", True)``), and without x64 a seed is
read modulo 2**32, as JAX's. ``shuffle`` (removed from JAX) is
``permutation(key, x, axis, independent=True)``. The samplers accept JAX's
keyword ``out_sharding`` and ignore it (one device). ``random_gamma_p`` is
not a primitive here but an object whose ``bind(keys, a, log_space=...)``
draws as JAX's does.
"""
from __future__ import annotations

import functools
import inspect
import math
from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.dtypes import canonical_type
from numxla.tracer.core import Tracer, abstractify

from ._random_core import (_as, _axis, _check_shape, _default, _dims, _dtype, _full, _gumbel,
                           _normal_real, _param_shape, _shape, _shuffle, _split, _uniform)
from ._random_keys import (KeyArray, PRNGKey, check_key, clone, fold_in, key, key_data,  # noqa: F401
                           key_dtype, key_impl, split, wrap_key_data)
from ._random_threefry import UINT_DTYPES, random_bits as _bits
from ._random_xla_math import xla_log

__all__ = [
    "PRNGKey", "key", "split", "fold_in", "key_data", "wrap_key_data", "key_impl", "key_dtype",
    "clone", "bits", "random_bits", "uniform", "normal", "bernoulli", "randint", "permutation",
    "shuffle", "choice", "categorical", "gumbel", "exponential", "laplace", "logistic",
    "cauchy", "rademacher", "truncated_normal", "maxwell", "double_sided_maxwell", "pareto",
    "rayleigh", "weibull_min", "lognormal", "geometric", "triangular", "wald",
    "multivariate_normal", "orthogonal", "gamma", "loggamma", "beta", "dirichlet", "t",
    "chisquare", "f", "generalized_normal", "ball", "poisson", "binomial", "multinomial",
    "random_gamma_p",
]


# --------------------------------------------------------------------------
# bits and uniform floats
# --------------------------------------------------------------------------

def bits(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (default u32, u64 with x64)."""
    key = check_key("bits", key)
    t = _dtype("bits", dtype, "u")
    return _bits(key, t.itemsize * 8, _shape(shape))


def random_bits(key: Any, bit_width: int, shape: Sequence[int]) -> Any:
    """``jax._src.prng.random_bits``: ``bit_width``-bit unsigned bits of ``shape``."""
    return _bits(check_key("random_bits", key), int(bit_width), _shape(shape))


def uniform(key: Any, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Any:
    """Uniform floats in ``[minval, maxval)``."""
    key = check_key("uniform", key)
    dtype = _dtype("uniform", dtype, "f")
    shape = _shape(shape)
    _check_shape("uniform", shape, minval=_dims(minval), maxval=_dims(maxval))
    return _uniform(key, shape, dtype, minval, maxval)


# --------------------------------------------------------------------------
# the samplers JAX users reach for first
# --------------------------------------------------------------------------

def normal(key: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Standard normal values: ``sqrt(2) * erf_inv(u)``, ``u`` uniform on (-1, 1).
    A complex dtype gives ``(re + 1j * im) / sqrt(2)`` from two split keys."""
    key = check_key("normal", key)
    shape = _shape(shape)
    if dtype is not None and np.issubdtype(canonical_type(dtype).numpy_dtype, np.complexfloating):
        ctype = canonical_type(dtype).numpy_dtype
        real = np.dtype(np.finfo(ctype).dtype)
        k_re, k_im = _split(key)
        re, im = (_normal_real(k, shape, real) for k in (k_re, k_im))
        return lax.div(lax.complex(re, im), _full(ctype.type(np.sqrt(2)), shape))
    return _normal_real(key, shape, _dtype("normal", dtype, "f"))


def bernoulli(key: Any, p: Any = np.float32(0.5), shape: Sequence[int] | None = None,
              mode: str = "low") -> Any:
    """Booleans, True with probability ``p``: ``uniform < p``. ``mode="high"``
    adds a second uniform's bits below the first's resolution."""
    key = check_key("bernoulli", key)
    dtype = abstractify(p).dtype
    if not np.issubdtype(dtype, np.floating):
        dtype = _default("f")
    p = _as(p, dtype)
    shape = _param_shape("bernoulli", shape, p=p)
    if mode == "high":
        u = _uniform(key, (2, *shape), dtype, 0.0, 1.0)
        u1, u2 = (lax.reshape(lax.slice(u, (i, *[0] * len(shape)), (i + 1, *shape)), shape)
                  for i in (0, 1))
        u2 = lax.mul(u2, _full(dtype.type(2.0 ** -np.finfo(dtype).nmant), shape))
        return lax.lt(u2, lax.sub(_full(p, shape), u1))
    if mode != "low":
        raise ValueError(f"bernoulli: mode must be 'low' or 'high', got {mode!r}")
    return lax.lt(_uniform(key, shape, dtype, 0.0, 1.0), _full(p, shape))


def _clip_convert(x: Any, dtype: np.dtype) -> Any:
    """Integer ``x`` converted to the integer ``dtype``, clipped to its range
    (not wrapped)."""
    src = abstractify(x).dtype
    lo = max(np.iinfo(dtype).min, np.iinfo(src).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(src).max)
    dims = _dims(x)
    clipped = lax.clamp(_full(src.type(lo), dims), x, _full(src.type(hi), dims))
    return lax.convert_element_type(clipped, dtype)


def _int_param(x: Any) -> Any:
    """An integer parameter as an array (floats truncate to the default int)."""
    x = xnp.asarray(x)
    if not np.issubdtype(abstractify(x).dtype, np.integer):
        x = lax.convert_element_type(x, _default("i"))
    return x


def randint(key: Any, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Integers in ``[minval, maxval)``: two words of random bits reduced
    modulo the span (JAX's algorithm, with its small bias for spans that are
    not powers of 2). Narrow dtypes sample in int32 and convert."""
    key = check_key("randint", key)
    dtype = _dtype("randint", dtype, "i")
    shape = _shape(shape)
    minval, maxval = _int_param(minval), _int_param(maxval)
    if dtype.itemsize < 4:
        info, i32 = np.iinfo(dtype), np.dtype(np.int32)
        lo, hi = _full(np.int32(info.min), ()), _full(np.int32(info.max), ())
        minval = lax.clamp(lo, lax.convert_element_type(minval, i32), hi)
        maxval = lax.clamp(lo, lax.convert_element_type(maxval, i32), lax.add(hi, np.int32(1)))
        return lax.convert_element_type(_randint(key, shape, minval, maxval, i32), dtype)
    return _randint(key, shape, minval, maxval, dtype)


def _randint(key: Any, shape: tuple[int, ...], minval: Any, maxval: Any, dtype: np.dtype) -> Any:
    _check_shape("randint", shape, minval=_dims(minval), maxval=_dims(maxval))
    nbits = dtype.itemsize * 8
    uint = UINT_DTYPES[nbits]
    top = _clip_convert(_full(np.array(np.iinfo(dtype).max, dtype), ()), abstractify(maxval).dtype)
    out_of_range = _full(lax.gt(maxval, lax.broadcast_in_dim(top, _dims(maxval), ())), shape)
    minval, maxval = (_full(_clip_convert(v, dtype), shape) for v in (minval, maxval))
    k1, k2 = _split(key)
    higher, lower = _bits(k1, nbits, shape), _bits(k2, nbits, shape)
    u = lambda v: _full(uint.type(v), shape)  # noqa: E731
    span = lax.convert_element_type(lax.sub(maxval, minval), uint)
    empty = lax.le(maxval, minval)
    span = lax.select(empty, u(1), span)
    # maxval past dtype's range: one more value (a span of 2**nbits wraps to 0,
    # for which rem leaves the bits as they are).
    span = lax.select(lax.bitwise_and(out_of_range, lax.bitwise_not(empty)),
                      lax.add(span, u(1)), span)
    # 2**nbits mod span, as ((2**(nbits/2) mod span)**2) mod span.
    multiplier = lax.rem(u(2 ** (nbits // 2)), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A shuffled ``arange(x)`` (integer ``x``) or ``x`` shuffled along ``axis``
    (each slice alike, or independently with ``independent=True``)."""
    key = check_key("permutation", key)
    if isinstance(x, Tracer) or np.ndim(x):
        x = xnp.asarray(x)
        axis = _axis(axis, len(_dims(x)))
        if independent or len(_dims(x)) == 1:
            return _shuffle(key, x, axis)
        order = _shuffle(key, lax.iota(_default("i"), _dims(x)[axis]), 0)
        return xnp.take(x, order, axis=axis)
    if not np.issubdtype(np.asarray(x).dtype, np.integer):
        raise TypeError("x must be an integer or at least 1-dimensional")
    return _shuffle(key, lax.iota(_default("i"), int(x)), 0)


def shuffle(key: Any, x: Any, axis: int = 0) -> Any:
    """``x`` shuffled along ``axis`` (JAX's deprecated ``shuffle``: each
    1-D slice along ``axis`` independently)."""
    key = check_key("shuffle", key)
    x = xnp.asarray(x)
    return _shuffle(key, x, _axis(axis, len(_dims(x))))


def gumbel(key: Any, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel values: ``-log(-log(u))``, ``u`` uniform on [tiny, 1).
    ``mode="high"`` draws the tail with two uniforms' bits."""
    key = check_key("gumbel", key)
    return _gumbel(key, _shape(shape), _dtype("gumbel", dtype, "f"), mode or "low")


def categorical(key: Any, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Category indices drawn with probabilities ``softmax(logits, axis)``: the
    argmax of logits plus Gumbel noise (the top-k without replacement)."""
    key = check_key("categorical", key)
    logits = xnp.asarray(logits)
    dims = _dims(logits)
    dtype = abstractify(logits).dtype
    axis = _axis(axis, len(dims))
    batch_shape = dims[:axis] + dims[axis + 1:]
    shape = batch_shape if shape is None else _shape(shape)
    _check_shape("categorical", shape, logits=batch_shape)
    prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        noise_shape = (*prefix, *shape[len(prefix):axis + len(prefix)], dims[axis],
                       *shape[axis + len(prefix):])
        noisy = lax.add(_gumbel(key, noise_shape, dtype, mode or "low"),
                        _full(logits, noise_shape))
        return lax.argmax(noisy, axis + len(prefix))
    k = math.prod(prefix)
    if k > dims[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({dims[axis]}).")
    noisy = lax.add(logits, _gumbel(key, dims, dtype, mode or "low"))
    _, indices = lax.top_k(xnp.moveaxis(noisy, axis, -1), k)
    return lax.reshape(indices, shape, (len(batch_shape), *range(len(batch_shape))))


def choice(key: Any, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Any:
    """A random sample of ``a``'s entries along ``axis`` (of ``arange(a)`` for an
    integer ``a``), with or without replacement, uniform or with probabilities
    ``p``."""
    key = check_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of choice must be a sequence, got {shape}")
    shape = _shape(shape)
    arr = xnp.asarray(a)
    scalar = not _dims(arr)
    if scalar:
        n_inputs = int(a)
    else:
        axis = _axis(axis, len(_dims(arr)))
        n_inputs = _dims(arr)[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return xnp.zeros(shape, abstractify(arr).dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population (size "
                         f"{n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if scalar else xnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if scalar else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=0 if scalar else axis)
    else:
        p = xnp.asarray(p)
        if not np.issubdtype(abstractify(p).dtype, np.floating):
            p = lax.convert_element_type(p, _default("f"))
        if _dims(p) != (n_inputs,):
            raise ValueError(f"p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {_dims(p)} and a.shape[axis] is "
                             f"{n_inputs}.")
        dtype = abstractify(p).dtype
        if replace:
            cum = lax.cumsum(p, 0)
            total = lax.reshape(lax.slice(cum, (n_inputs - 1,), (n_inputs,)), ())
            u = _uniform(key, shape, dtype, 0.0, 1.0)
            r = lax.mul(_full(total, shape), lax.sub(_full(dtype.type(1), shape), u))
            # searchsorted(cum, r, side="left"): how many cumulative sums are below r.
            below = lax.lt(_full(cum, (*shape, n_inputs)),
                           lax.broadcast_in_dim(r, (*shape, n_inputs), tuple(range(len(shape)))))
            ind = lax.reduce_sum(lax.convert_element_type(below, _default("i")), (len(shape),))
        else:
            g = lax.add(_gumbel(key, (n_inputs,), dtype, mode or "low"), xla_log(p))
            ind = lax.convert_element_type(lax.top_k(g, n_draws)[1], _default("i"))
        result = ind if scalar else xnp.take(arr, ind, axis=axis)
    out = shape if scalar else (*_dims(arr)[:axis], *shape, *_dims(arr)[axis + 1:])
    return lax.reshape(result, out)


from ._random_counts import binomial, multinomial, poisson  # noqa: E402,F401
from ._random_samplers import (ball, beta, chisquare, dirichlet, f, gamma,  # noqa: E402,F401
                               generalized_normal, loggamma, multivariate_normal, orthogonal,
                               random_gamma_p, t)
from ._random_transforms import (cauchy, double_sided_maxwell, exponential,  # noqa: E402,F401
                                 geometric, laplace, logistic, lognormal, maxwell, pareto,
                                 rademacher, rayleigh, triangular, truncated_normal, wald,
                                 weibull_min)


def _with_out_sharding(fn: Any) -> Any:
    """``fn`` taking JAX's keyword ``out_sharding`` too, ignored: numxla runs
    on one device, where every sharding is the one layout (values do not
    depend on it)."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args: Any, out_sharding: Any = None, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    wrapper.__signature__ = signature.replace(parameters=[
        *signature.parameters.values(),
        inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)])
    return wrapper


# Eager calls of a signature called more than once go through a cached jit (_random_eager).
from ._random_eager import eager_jit as _eager_jit  # noqa: E402

_NOT_TRACED = ("PRNGKey", "key", "key_data", "wrap_key_data", "key_impl", "key_dtype", "clone",
               "random_gamma_p")
# JAX's samplers without an ``out_sharding`` keyword
_NO_OUT_SHARDING = (*_NOT_TRACED, "split", "fold_in", "random_bits", "shuffle", "choice",
                    "double_sided_maxwell", "weibull_min", "binomial", "multinomial")
for _name in __all__:
    if _name not in _NOT_TRACED:
        globals()[_name] = _eager_jit(globals()[_name])
    if _name not in _NO_OUT_SHARDING:
        globals()[_name] = _with_out_sharding(globals()[_name])
del _name
