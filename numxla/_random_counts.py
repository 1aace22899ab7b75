"""``numxla.random``'s samplers of counts: ``poisson``, ``binomial`` and
``multinomial``, with JAX's algorithms and key use.

Poisson: Knuth's product of uniforms below rate 10, Hormann's transformed
rejection (PTRS) above. Binomial (as TensorFlow's and JAX's): for ``n q <= 10``
(``q = min(p, 1 - p)``) the inversion of geometric waiting times, above it
Hormann's BTRS; draws for ``p > 1/2`` are ``n`` minus those for ``1 - p``.
Multinomial: one binomial per category of the count still left, with the
category's share of the probability still left, in a ``scan``.

Their loops are ``while_loop``s over all elements at once (each iteration
draws for every element, as JAX's): the counts are JAX's but for a rejection
test decided by the last bit of a ``log`` (XLA's multiply-adds are not
fused here), which has not happened in the test vectors.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.dtypes import canonical_type
from numxla.tracer.core import abstractify

from ._random_core import (_as, _check_shape, _default, _dims, _dtype, _full, _param_shape,
                           _shape, _split, _uniform)
from ._random_keys import check_key
from ._random_threefry import split_key
from ._random_xla_math import xla_log, xla_log1p

__all__ = ["poisson", "binomial", "multinomial"]


# --------------------------------------------------------------------------
# poisson
# --------------------------------------------------------------------------

def _poisson_knuth(key: Any, lam: Any, shape: tuple, dtype: np.dtype, max_iters: Any) -> Any:
    """Count uniforms until their product drops below exp(-lam)."""
    def body(carry):
        i, k, rng, log_prod = carry
        rng, subkey = _split(rng)
        k = lax.select(lax.gt(log_prod, lax.neg(lam)), lax.add(k, _full(dtype.type(1), shape)), k)
        u = _uniform(subkey, shape, np.dtype(np.float32), 0.0, 1.0)
        return lax.add(i, np.int32(1)), k, rng, lax.add(log_prod, xla_log(u))

    def more(carry):
        i, _, _, log_prod = carry
        going = lax.reduce_or(lax.gt(log_prod, lax.neg(lam)), tuple(range(len(shape))))
        return lax.bitwise_and(going, lax.lt(i, max_iters))

    init = (np.int32(0), _full(dtype.type(0), shape), key, _full(np.float32(0), shape))
    k = lax.while_loop(more, body, init)[1]
    return lax.sub(k, _full(dtype.type(1), shape))


def _poisson_rejection(key: Any, lam: Any, shape: tuple, dtype: np.dtype, max_iters: Any) -> Any:
    """Hormann's transformed rejection (PTRS) for large rates."""
    c = lambda v: _full(np.float32(v), shape)  # noqa: E731
    log_lam = lax.log(lam)
    b = lax.add(c(0.931), lax.mul(c(2.53), lax.sqrt(lam)))
    a = lax.add(c(-0.059), lax.mul(c(0.02483), b))
    inv_alpha = lax.add(c(1.1239), lax.div(c(1.1328), lax.sub(b, c(3.4))))
    v_r = lax.sub(c(0.9277), lax.div(c(3.6224), lax.sub(b, c(2))))

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, key0, key1 = _split(rng, 3)
        u = lax.sub(_uniform(key0, shape, np.dtype(np.float32), 0.0, 1.0), c(0.5))
        v = _uniform(key1, shape, np.dtype(np.float32), 0.0, 1.0)
        us = lax.sub(c(0.5), lax.abs(u))
        k = lax.floor(lax.add(lax.add(lax.mul(lax.add(lax.div(lax.mul(c(2), a), us), b), u), lam),
                              c(0.43)))
        s = lax.log(lax.div(lax.mul(v, inv_alpha), lax.add(lax.div(a, lax.mul(us, us)), b)))
        tt = lax.sub(lax.add(lax.neg(lam), lax.mul(k, log_lam)),
                     lax.lgamma(lax.max(lax.add(k, c(1)), c(0.5))))
        accept1 = lax.bitwise_and(lax.ge(us, c(0.07)), lax.le(v, v_r))
        reject = lax.bitwise_or(lax.lt(k, c(0)), lax.bitwise_and(lax.lt(us, c(0.013)),
                                                                 lax.gt(v, us)))
        accept = lax.bitwise_or(accept1, lax.bitwise_and(lax.bitwise_not(reject), lax.le(s, tt)))
        return (lax.add(i, np.int32(1)), lax.select(accept, k, k_out),
                lax.bitwise_or(accepted, accept), rng)

    def more(carry):
        i, _, accepted, _ = carry
        going = lax.reduce_or(lax.bitwise_not(accepted), tuple(range(len(shape))))
        return lax.bitwise_and(going, lax.lt(i, max_iters))

    init = (np.int32(0), c(-1), _full(np.bool_(False), shape), key)
    return lax.convert_element_type(lax.while_loop(more, body, init)[1], dtype)


def poisson(key: Any, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Poisson(lam) counts (default int dtype); rates below 10 by Knuth's
    method, larger ones by transformed rejection; 0 where ``lam == 0``."""
    key = check_key("poisson", key)
    dtype = _dtype("poisson", dtype, "i")
    shape = _param_shape("poisson", shape, lam=lam)
    lam = _full(_as(lam, np.float32), shape)
    if not shape:   # the loops reduce over the shape: give scalars one axis
        return lax.reshape(poisson(key, lax.reshape(lam, (1,)), (1,), dtype), ())
    use_knuth = lax.bitwise_or(lax.ne(lam, lam), lax.lt(lam, _full(np.float32(10), shape)))
    lam_knuth = lax.select(use_knuth, lam, _full(np.float32(0), shape))
    lam_rejection = lax.select(use_knuth, _full(np.float32(1e5), shape), lam)
    max_iters = np.int32(min(np.iinfo(dtype).max, np.iinfo(np.int32).max))
    result = lax.select(use_knuth,
                        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lax.eq(lam, _full(np.float32(0), shape)),
                      _full(dtype.type(0), shape), result)




# --------------------------------------------------------------------------
# binomial
# --------------------------------------------------------------------------

# log(k!) minus Stirling's approximation (k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2
_STIRLING_TAIL = tuple(math.lgamma(k + 1) - (k + 0.5) * math.log(k + 1) + (k + 1)
                       - 0.5 * math.log(2 * math.pi) for k in range(10))


def _stirling_tail(k: Any) -> Any:
    """:data:`_STIRLING_TAIL` at ``k`` (floored) for k <= 9; above, the series
    ``(1/12 - (1/360 - 1/1260/(k+1)^2)/(k+1)^2)/(k+1)``, evaluated (as JAX
    0.10.2 evaluates it) at k clamped to 9."""
    dtype, dims = abstractify(k).dtype, _dims(k)
    c = lambda v: _full(dtype.type(v), dims)  # noqa: E731
    clamped = lax.clamp(c(0), k, c(9))
    kp1 = lax.add(clamped, c(1))
    kp1sq = lax.mul(kp1, kp1)
    series = lax.div(lax.sub(c(1 / 12), lax.div(lax.sub(c(1 / 360), lax.div(c(1 / 1260), kp1sq)),
                                                kp1sq)), kp1)
    table = np.asarray(_STIRLING_TAIL, dtype)
    index = lax.convert_element_type(lax.floor(clamped), np.int32)
    looked_up = xnp.take(table, index)
    return lax.select(lax.le(k, c(9)), looked_up, series)


def _binomial_inversion(key: Any, count: Any, q: Any, shape: tuple) -> Any:
    """Count geometric(q) waiting times until their sum passes ``count``."""
    dtype = abstractify(q).dtype
    c = lambda v: _full(dtype.type(v), shape)  # noqa: E731
    log_q_complement = xla_log1p(lax.neg(q))

    def body(carry):
        i, number, total, rng = carry
        subkey, rng = _split(rng)
        number = lax.select(lax.le(total, count), lax.add(number, c(1)), number)
        u = _uniform(subkey, shape, dtype, 0.0, 1.0)
        total = lax.add(total, lax.ceil(lax.div(xla_log(u), log_q_complement)))
        return lax.add(i, np.int32(1)), number, total, rng

    def more(carry):
        i, _, total, _ = carry
        going = lax.reduce_or(lax.le(total, count), tuple(range(len(shape))))
        return lax.bitwise_and(going, lax.lt(i, np.int32(np.iinfo(np.int32).max)))

    number = lax.while_loop(more, body, (np.int32(0), c(0), c(0), key))[1]
    return lax.sub(number, c(1))


def _binomial_btrs(key: Any, count: Any, q: Any, shape: tuple) -> Any:
    """Hormann's transformed rejection with squeeze (BTRS), for ``count q > 10``."""
    dtype = abstractify(q).dtype
    c = lambda v: _full(dtype.type(v), shape)  # noqa: E731
    add, sub, mul, div = lax.add, lax.sub, lax.mul, lax.div
    stddev = lax.sqrt(mul(mul(count, q), sub(c(1), q)))
    b = add(c(1.15), mul(c(2.53), stddev))
    a = add(add(c(-0.0873), mul(c(0.0248), b)), mul(c(0.01), q))
    center = add(mul(count, q), c(0.5))
    v_r = sub(c(0.92), div(c(4.2), b))
    r = div(q, sub(c(1), q))
    alpha = mul(add(c(2.83), div(c(5.1), b)), stddev)
    m = lax.floor(mul(add(count, c(1)), q))
    n_m1 = add(sub(count, m), c(1))
    m_term = mul(add(m, c(0.5)), xla_log(div(add(m, c(1)), mul(r, n_m1))))
    tail_m, tail_n_m = _stirling_tail(m), _stirling_tail(sub(count, m))

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, key_u, key_v = _split(rng, 3)
        u = sub(_uniform(key_u, shape, dtype, 0.0, 1.0), c(0.5))
        v = _uniform(key_v, shape, dtype, 0.0, 1.0)
        us = sub(c(0.5), lax.abs(u))
        accept_fast = lax.bitwise_and(lax.ge(us, c(0.07)), lax.le(v, v_r))
        k = lax.floor(add(mul(add(div(mul(c(2), a), us), b), u), center))
        reject = lax.bitwise_or(lax.lt(k, c(0)), lax.gt(k, count))
        log_v = xla_log(div(mul(v, alpha), add(div(a, mul(us, us)), b)))
        n_k1 = add(sub(count, k), c(1))
        bound = add(add(m_term, mul(add(count, c(1)), xla_log(div(n_m1, n_k1)))),
                    mul(add(k, c(0.5)), xla_log(div(mul(r, n_k1), add(k, c(1))))))
        bound = sub(sub(add(add(bound, tail_m), tail_n_m), _stirling_tail(k)),
                    _stirling_tail(sub(count, k)))
        accept = lax.bitwise_or(accept_fast,
                                lax.bitwise_and(lax.bitwise_not(reject), lax.le(log_v, bound)))
        return (add(i, np.int32(1)), lax.select(accept, k, k_out),
                lax.bitwise_or(accepted, accept), rng)

    def more(carry):
        i, _, accepted, _ = carry
        going = lax.reduce_or(lax.bitwise_not(accepted), tuple(range(len(shape))))
        return lax.bitwise_and(going, lax.lt(i, np.int32(np.iinfo(np.int32).max)))

    init = (np.int32(0), c(-1), _full(np.bool_(False), shape), key)
    return lax.while_loop(more, body, init)[1]


def _inexact(*values: Any) -> np.dtype:
    """The values' promoted type, or the default float if it is not a float."""
    dtype = np.dtype(xnp.result_type(*values))
    return dtype if np.issubdtype(dtype, np.inexact) else _default("f")


def binomial(key: Any, n: Any, p: Any, shape: Sequence[int] | None = None,
             dtype: Any = None) -> Any:
    """Binomial(n, p) counts, as floats (NaN where ``n`` is negative or NaN or
    ``p`` is NaN or negative, inf where ``n`` is); ``n`` is floored."""
    key = check_key("binomial", key)
    dtype = _dtype("binomial", dtype, "f")
    shape = _param_shape("binomial", shape, n=n, p=p)
    work = _inexact(p)
    prob = _full(_as(p, work), shape)
    count = _full(_as(n, work), shape)
    if not shape:   # the loops reduce over the shape: give scalars one axis
        return lax.reshape(binomial(key, lax.reshape(count, (1,)), lax.reshape(prob, (1,)),
                                    (1,), dtype), ())
    c = lambda v: _full(work.type(v), shape)  # noqa: E731
    below_half = lax.lt(prob, c(0.5))
    q = lax.select(below_half, prob, lax.sub(c(1), prob))
    bad_count = lax.bitwise_or(lax.ne(count, count), lax.lt(count, c(0)))
    infinite = lax.eq(lax.abs(count), c(np.inf))
    q_nan, q_negative = lax.ne(q, q), lax.lt(q, c(0))
    q = lax.select(lax.bitwise_or(q_nan, q_negative), c(0.01), q)
    use_inversion = lax.bitwise_or(bad_count, lax.le(lax.mul(count, q), c(10)))
    count = lax.floor(count)
    draws = lax.select(
        use_inversion,
        _binomial_inversion(key, lax.select(use_inversion, count, c(0)), q, shape),
        _binomial_btrs(key, lax.select(use_inversion, c(1e4), count),
                       lax.select(use_inversion, c(0.5), q), shape))
    draws = lax.convert_element_type(draws, dtype)
    invalid = lax.bitwise_or(lax.bitwise_or(q_negative, q_nan), bad_count)
    d = lambda v: _full(dtype.type(v), shape)  # noqa: E731
    draws = lax.select(invalid, d(np.nan), draws)
    draws = lax.select(lax.bitwise_and(infinite, lax.bitwise_not(invalid)), d(np.inf), draws)
    keep = lax.bitwise_or(lax.bitwise_or(below_half, bad_count), lax.bitwise_or(q_nan, infinite))
    return lax.select(keep, draws, lax.sub(lax.convert_element_type(count, dtype), draws))


def multinomial(key: Any, n: Any, p: Any, *, shape: Sequence[int] | None = None,
                dtype: Any = None, unroll: int | bool = 1) -> Any:
    """Counts of ``n`` draws among the categories of ``p`` (last axis), as
    floats by default; ``shape`` is the result's, categories included."""
    key = check_key("multinomial", key)
    work = _inexact(n, p)
    dtype = _default("f") if dtype is None else canonical_type(dtype).numpy_dtype
    n, p = _as(n, work), _as(p, work)
    shape = _dims(p) if shape is None else _shape(shape)
    if not shape:
        raise ValueError("multinomial: p needs an axis of categories, got a scalar")
    _check_shape("multinomial", shape, p=_dims(p))
    _check_shape("multinomial", shape[:-1], n=_dims(n))
    p = xnp.moveaxis(_full(p, shape), -1, 0)
    left = lax.cumsum(p, 0, reverse=True)
    zero = lax.eq(left, lax.full_like(left, 0))
    ratios = lax.div(p, lax.select(zero, lax.full_like(left, 1), left))

    def one_category(remaining, ratio_and_key):
        ratio, subkey = ratio_and_key
        ratio = lax.clamp(_as(0, work), ratio, _as(1, work))
        counts = binomial(subkey, remaining, ratio, dtype=work)
        return lax.sub(remaining, counts), counts

    keys = split_key(key, (shape[-1],))
    _, counts = lax.scan(one_category, _full(n, shape[:-1]), (ratios, keys), unroll=unroll)
    return lax.convert_element_type(xnp.moveaxis(counts, 0, -1), dtype)
