"""The samplers of ``numxla.random`` built on gamma draws or on a matrix
factorization: ``gamma`` and its family (``loggamma``, ``beta``,
``dirichlet``, ``t``, ``chisquare``, ``f``, ``generalized_normal``, ``ball``),
``multivariate_normal`` and ``orthogonal``.

They follow JAX's algorithms and key use (so their draws are JAX's up to the
last bits of ``exp``/``pow``, where a rejection test may then go the other
way): Marsaglia-Tsang for gamma, one split key per element (``vmap`` over the
elements, as JAX's CPU lowering). The rejection loop is a ``while_loop``,
which has no reverse mode: the draws are made from ``stop_gradient(a)`` and a
``custom_jvp`` gives them JAX's implicit-reparameterization derivative in
``a`` (``_random_gamma_grad``), so every sampler here is differentiable in
its float parameters, as JAX's are.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff.custom import custom_jvp
from numxla.tracer.core import Tracer, abstractify

from ._random_core import (_as, _check_shape, _default, _dims, _dtype, _exponential, _full,
                           _normal_real, _param_shape, _shape, _split, _uniform)
from ._random_gamma_grad import log_draw_derivative
from ._random_keys import check_key
from ._random_threefry import split_key
from ._random_transforms import rademacher
from ._random_xla_math import mul_add, xla_log

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f",
           "generalized_normal", "ball", "random_gamma_p", "multivariate_normal", "orthogonal"]


# --------------------------------------------------------------------------
# gamma (Marsaglia and Tsang, "A simple method for generating gamma variables")
# --------------------------------------------------------------------------

def _gamma_loop(keys: Any, alpha: Any, log_space: bool) -> Any:
    """One Gamma(alpha) draw (its log with ``log_space``) per key of
    ``uint32[n, 2]``, ``alpha`` of shape ``(n,)``. For alpha < 1 it draws
    Gamma(alpha + 1) and boosts by ``u ** (1 / alpha)``. The rejection loops
    run on all elements at once, while any still rejects, and update only
    those: each element's draw is the one its key gives alone (JAX's ``vmap``
    over the elements), without tracing a batched loop."""
    dtype = abstractify(alpha).dtype
    c_ = lambda v: _full(dtype.type(v), _dims(alpha))  # noqa: E731
    one, zero = c_(1), c_(0)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, c_(1 / 3))
    c = lax.div(c_(1 / 3), lax.sqrt(d))

    def keep(mask, new, old):
        """``new`` where the element's ``mask`` holds, else ``old``."""
        return tuple(lax.select(lax.broadcast_in_dim(mask, _dims(n), (0,)), n, o)
                     for n, o in zip(new, old))

    def any_of(state):
        return lax.reduce_or(state[0], (0,))

    def rejected(x2, v3, u):
        squeeze = lax.ge(u, lax.sub(one, lax.mul(c_(0.0331), lax.mul(x2, x2))))
        log_test = lax.ge(xla_log(u), lax.add(lax.mul(x2, c_(0.5)),
                                              lax.mul(d, lax.add(lax.sub(one, v3), xla_log(v3)))))
        return lax.bitwise_and(squeeze, log_test)

    def next_normal(state):     # (drawing, key, x, v): until v = 1 + c x > 0
        drawing, key = state[:2]
        key_next, subkey = _split(key)
        x = _normal_real(subkey, (), dtype)
        key, x, v = keep(drawing, (key_next, x, mul_add(x, c, one)), state[1:])
        return lax.bitwise_and(drawing, lax.le(v, zero)), key, x, v

    def propose(state):         # (rejecting, key, x^2, v^3, u)
        rejecting, key = state[:2]
        key_next, x_key, u_key = _split(key, 3)
        _, _, x, v = lax.while_loop(any_of, next_normal, (rejecting, x_key, zero, c_(-1)))
        u = _uniform(u_key, (), dtype, 0.0, 1.0)
        new = keep(rejecting, (key_next, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u), state[1:])
        return lax.bitwise_and(rejecting, rejected(*new[1:])), *new

    key, subkey = _split(keys)
    start = (key, zero, one, c_(2))
    v3 = lax.while_loop(any_of, propose, (rejected(*start[1:]), *start))[3]
    if log_space:
        log_u = lax.neg(_exponential(subkey, (), dtype))
        boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_u, zero)), zero,
                           lax.mul(log_u, lax.div(one, alpha_orig)))
        return lax.add(lax.add(xla_log(d), xla_log(v3)), boost)
    u = lax.sub(one, _uniform(subkey, (), dtype, 0.0, 1.0))
    boost = lax.select(boost_mask, one, lax.pow(u, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v3), boost)


@functools.partial(custom_jvp, nondiff_argnums=(2,))
def _reparameterized(a: Any, draws: Any, log_space: bool) -> Any:
    """``draws`` (made from ``stop_gradient(a)``), with the derivative in ``a``
    of Gamma(a) draws (of their logs with ``log_space``)."""
    return draws


@_reparameterized.defjvp
def _reparameterized_jvp(log_space: bool, primals: tuple, tangents: tuple) -> tuple:
    a, draws = primals
    if log_space:
        return draws, lax.mul(tangents[0], log_draw_derivative(a, lax.exp(draws), draws))
    dx = lax.mul(draws, log_draw_derivative(a, draws, lax.log(draws)))
    dx = lax.select(lax.eq(draws, lax.full_like(draws, 0)), lax.full_like(draws, 0), dx)
    return draws, lax.mul(tangents[0], dx)


def _gamma_draws(keys: Any, a: Any, log_space: bool) -> Any:
    """One Gamma(a) draw (its log with ``log_space``) per raw key of
    ``uint32[n, 2]``, for ``a`` of shape ``(n,)``; differentiable in ``a``."""
    draws = _gamma_loop(keys, lax.stop_gradient(a), log_space)
    return _reparameterized(a, draws, log_space)


def _gamma(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Any:
    key = check_key(name, key)
    dtype = _dtype(name, dtype, "f")
    shape = _param_shape(name, shape, a=a)
    a = _full(_as(a, dtype), shape)
    n = math.prod(shape)
    if n == 0:
        return a
    draws = _gamma_draws(split_key(key, (n,)), lax.reshape(a, (n,)), log_space)
    return lax.reshape(draws, shape)


def _log_gamma_pair(key: Any, a: Any, b: Any, shape: tuple, dtype: np.dtype) -> tuple:
    """``loggamma(k1, a, shape), loggamma(k2, b, shape)`` for ``k1, k2 =
    split(key)``, drawn in one loop rather than two (each element's draw is
    the one its key gives alone)."""
    a, b = (_full(_as(v, dtype), shape) for v in (a, b))
    n = math.prod(shape)
    if n == 0:
        return a, b
    keys = lax.reshape(split_key(split_key(key, (2,)), (n,)), (2 * n, 2))
    logs = _gamma_draws(keys, lax.concatenate([lax.reshape(a, (n,)), lax.reshape(b, (n,))], 0),
                        log_space=True)
    return tuple(lax.reshape(lax.slice(logs, (i * n,), ((i + 1) * n,)), shape) for i in (0, 1))


class _RandomGammaP:
    """``jax.random.random_gamma_p``, for code that binds it: ``bind(keys, a,
    log_space=False)`` draws one Gamma(a) value (its log) per key, ``keys``
    of ``a``'s shape. Not a primitive of numxla's graphs: the draws are ops."""
    name = "random_gamma"

    def bind(self, keys: Any, a: Any, *, log_space: bool = False) -> Any:
        raw = check_key("random_gamma_p", keys, batched=True)
        a = xnp.asarray(a)
        shape = _dims(a)
        if _dims(raw)[:-1] != shape:
            raise ValueError(f"random_gamma_p: keys of shape {_dims(raw)[:-1]} for a of "
                             f"shape {shape}: one key per element")
        n = math.prod(shape)
        if n == 0:
            return a
        # each element draws from split(its key, 1), as gamma's elements do
        keys = lax.reshape(split_key(lax.reshape(raw, (n, 2)), (1,)), (n, 2))
        return lax.reshape(_gamma_draws(keys, lax.reshape(a, (n,)), log_space), shape)


random_gamma_p = _RandomGammaP()


def gamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) values (shape ``a.shape`` by default)."""
    return _gamma("gamma", key, a, shape, dtype, log_space=False)


def loggamma(key: Any, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """The logs of Gamma(a, 1) values, computed in log space (accurate for small a)."""
    return _gamma("loggamma", key, a, shape, dtype, log_space=True)


def beta(key: Any, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Beta(a, b) values: ``Ga / (Ga + Gb)`` from two log-gamma draws."""
    key = check_key("beta", key)
    dtype = _dtype("beta", dtype, "f")
    shape = _param_shape("beta", shape, a=a, b=b)
    log_a, log_b = _log_gamma_pair(key, a, b, shape, dtype)
    top = lax.max(log_a, log_b)
    ga, gb = (lax.exp(lax.sub(v, top)) for v in (log_a, log_b))
    return lax.div(ga, lax.add(ga, gb))


def dirichlet(key: Any, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) vectors along the last axis: normalised gamma draws."""
    key = check_key("dirichlet", key)
    dtype = _dtype("dirichlet", dtype, "f")
    alpha = _as(alpha, dtype)
    dims = _dims(alpha)
    if not dims:
        raise ValueError("dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0")
    shape = dims[:-1] if shape is None else _shape(shape)
    _check_shape("dirichlet", shape, alpha=dims[:-1])
    logs = loggamma(key, alpha, (*shape, dims[-1]), dtype)
    top = lax.reduce_max(logs, (len(shape),))
    e = lax.exp(lax.sub(logs, lax.broadcast_in_dim(top, _dims(logs), tuple(range(len(shape))))))
    total = lax.reduce_sum(e, (len(shape),))
    return lax.div(e, lax.broadcast_in_dim(total, _dims(e), tuple(range(len(shape)))))


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t(df) values: ``normal * sqrt(df / 2 / gamma(df / 2))``."""
    key = check_key("t", key)
    dtype = _dtype("t", dtype, "f")
    shape = _param_shape("t", shape, df=df)
    key_n, key_g = _split(key)
    n = _normal_real(key_n, shape, dtype)
    half_df = lax.div(_full(_as(df, dtype), shape), _full(dtype.type(2), shape))
    g = gamma(key_g, half_df, shape, dtype)
    return lax.mul(n, lax.sqrt(lax.div(half_df, g)))


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Chi-square(df) values: ``2 * exp(loggamma(df / 2))``."""
    key = check_key("chisquare", key)
    dtype = _dtype("chisquare", dtype, "f")
    shape = _param_shape("chisquare", shape, df=df)
    half_df = lax.div(_as(df, dtype), _full(dtype.type(2), _dims(df)))
    return lax.mul(lax.exp(loggamma(key, half_df, shape, dtype)), _full(dtype.type(2), shape))


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None,
      dtype: Any = None) -> Any:
    """F(dfnum, dfden) values: a ratio of scaled chi-squares (``chisquare``'s,
    from ``split(key)``'s second and first key)."""
    key = check_key("f", key)
    dtype = _dtype("f", dtype, "f")
    shape = _param_shape("f", shape, dfnum=dfnum, dfden=dfden)
    dfnum, dfden = _as(dfnum, dtype), _as(dfden, dtype)
    half = lambda df: lax.div(df, _full(dtype.type(2), _dims(df)))  # noqa: E731
    logs = _log_gamma_pair(key, half(dfden), half(dfnum), shape, dtype)
    den, num = (lax.div(lax.mul(lax.exp(v), _full(dtype.type(2), shape)), _full(df, shape))
                for v, df in zip(logs, (dfden, dfnum)))
    return lax.div(num, den)


def _power_of(x: Any, p: Any) -> Any:
    """``x ** p`` as ``jnp.power`` computes it: repeated products for a Python
    int ``p``, ``pow`` otherwise."""
    if isinstance(p, (int, np.integer)) and not isinstance(p, bool):
        return lax.integer_pow(x, int(p))
    return lax.pow(x, _full(_as(p, abstractify(x).dtype), _dims(x)))


def _reciprocal(p: Any) -> Any:
    """``1 / p`` in ``p``'s float type (the default one for a Python number,
    as in JAX, whose samplers trace ``p``)."""
    p = xnp.asarray(p)
    if not np.issubdtype(abstractify(p).dtype, np.floating):
        p = lax.convert_element_type(p, _default("f"))
    return lax.div(lax.full_like(p, 1), p)


def _generalized_normal(key: Any, p: Any, shape: tuple, dtype: np.dtype) -> Any:
    key_g, key_r = _split(key)
    inv_p = _reciprocal(p)
    g = gamma(key_g, inv_p, shape, dtype)
    return lax.mul(rademacher(key_r, shape, dtype), _power_of(g, inv_p))


def generalized_normal(key: Any, p: Any, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Values of density proportional to ``exp(-|x|**p)``: a random sign times
    ``Gamma(1/p) ** (1/p)``."""
    key = check_key("generalized_normal", key)
    dtype = _dtype("generalized_normal", dtype, "f")
    shape = _shape(shape)
    _check_shape("generalized_normal", shape, p=_dims(p))
    return _generalized_normal(key, p, shape, dtype)


def ball(key: Any, d: int, p: Any = 2, shape: Sequence[int] = (), dtype: Any = None) -> Any:
    """Points uniform in the unit L^p ball of dimension ``d`` (Barthe et al.):
    generalized normals ``g`` over ``(sum |g|**p + e) ** (1/p)``, ``e``
    exponential; of shape ``shape + (d,)``."""
    key = check_key("ball", key)
    dtype = _dtype("ball", dtype, "f")
    shape = _shape(shape)
    if isinstance(d, Tracer) or np.ndim(d) or not isinstance(d, (int, np.integer)) or d < 0:
        raise TypeError(f"ball: d must be a nonnegative Python int, got {d!r}")
    key_g, key_e = _split(key)
    g = _generalized_normal(key_g, p, (*shape, int(d)), dtype)
    total = lax.add(lax.reduce_sum(_power_of(lax.abs(g), p), (len(shape),)),
                    _exponential(key_e, shape, dtype))
    radius = _power_of(total, _reciprocal(p))
    return lax.div(g, lax.broadcast_in_dim(radius, (*shape, int(d)), tuple(range(len(shape)))))


# --------------------------------------------------------------------------
# matrices
# --------------------------------------------------------------------------

def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Sequence[int] | None = None,
                        dtype: Any = None, method: str = "cholesky") -> Any:
    """``mean + L @ z`` with ``L`` the Cholesky factor of ``cov`` and ``z``
    standard normal, of shape ``shape + mean.shape[-1:]``."""
    key = check_key("multivariate_normal", key)
    dtype = _dtype("multivariate_normal", dtype, "f")
    if method != "cholesky":
        raise NotImplementedError(f"multivariate_normal: method={method!r} needs an svd/eigh, "
                                  "which numxla does not have; use method='cholesky'")
    mean, cov = _as(mean, dtype), _as(cov, dtype)
    mdims, cdims = _dims(mean), _dims(cov)
    if len(mdims) < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{len(mdims)}")
    if len(cdims) < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{len(cdims)}")
    n = mdims[-1]
    if cdims[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cdims}.")
    if shape is None:
        shape = xnp.broadcast_shapes(mdims[:-1], cdims[:-2])
    else:
        shape = _shape(shape)
        _check_shape("normal", shape, mean=mdims[:-1], cov=cdims[:-2])
    factor = xnp.linalg.cholesky(cov)  # symmetrized input, as jnp.linalg.cholesky (JAX)
    z = _normal_real(key, (*shape, n), dtype)
    return xnp.add(mean, xnp.einsum("...ij,...j->...i", factor, z))


def _qr_q(z: Any) -> Any:
    """The Q of ``z``'s QR factorization with a positive diagonal R (unique):
    Cholesky QR, applied twice for orthogonality to working precision."""
    for _ in range(2):
        gram = xnp.einsum("...ki,...kj->...ij", z, z)
        r_t = lax.cholesky(gram, lower=True)                          # R^T
        z = lax.triangular_solve(r_t, z, left_side=False, lower=True, transpose_a=True)
    return z


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """A Haar-random orthogonal ``n x m`` matrix (semi-orthogonal if n != m): the Q
    of a Gaussian matrix's QR with R's diagonal made positive."""
    key = check_key("orthogonal", key)
    dtype = _dtype("orthogonal", dtype, "f")
    shape = _shape(shape)
    n, m = int(n), int(n if m is None else m)
    z = _normal_real(key, (*shape, max(n, m), min(n, m)), dtype)
    q = _qr_q(z)
    return xnp.swapaxes(q, -1, -2) if n < m else q
