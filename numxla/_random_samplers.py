"""The samplers of ``numxla.random`` that loop or factor a matrix: gamma and
its family (``loggamma``, ``beta``, ``dirichlet``, ``t``, ``chisquare``,
``f``), ``poisson``, ``multivariate_normal`` and ``orthogonal``.

They follow JAX's algorithms and key use (so their draws are JAX's up to the
last bits of ``exp``/``pow``/``lgamma``, where a rejection test may then go
the other way): Marsaglia-Tsang for gamma with one split key per element
(``vmap`` over the elements, as JAX's CPU lowering), Knuth's product of
uniforms for Poisson below rate 10 and Hormann's transformed rejection above.
Their loops are ``while_loop``s: no reverse-mode derivatives (JAX gives
gamma an implicit-reparameterisation gradient; numxla has no custom rule for
it yet).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff import vmap
from numxla.tracer.core import abstractify

from ._random_core import (_as, _check_shape, _dims, _dtype, _exponential, _full, _normal_real,
                           _param_shape, _shape, _split, _uniform)
from ._random_threefry import check_key, split_key
from ._random_xla_math import mul_add, xla_log

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f", "poisson",
           "multivariate_normal", "orthogonal"]


# --------------------------------------------------------------------------
# gamma (Marsaglia and Tsang, "A simple method for generating gamma variables")
# --------------------------------------------------------------------------

def _gamma_one(key: Any, alpha: Any, log_space: bool) -> Any:
    """One Gamma(alpha) draw (its log with ``log_space``) from one key. For
    alpha < 1 it draws Gamma(alpha + 1) and boosts by ``u ** (1 / alpha)``."""
    dtype = abstractify(alpha).dtype
    c_ = dtype.type
    one, zero = c_(1), c_(0)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, c_(1 / 3))
    c = lax.div(c_(1 / 3), lax.sqrt(d))

    def rejected(state):
        _, x2, v3, u = state
        squeeze = lax.ge(u, lax.sub(one, lax.mul(c_(0.0331), lax.mul(x2, x2))))
        log_test = lax.ge(xla_log(u), lax.add(lax.mul(x2, c_(0.5)),
                                              lax.mul(d, lax.add(lax.sub(one, v3), xla_log(v3)))))
        return lax.bitwise_and(squeeze, log_test)

    def propose(state):
        def next_normal(kxv):
            k, subkey = _split(kxv[0])
            x = _normal_real(subkey, (), dtype)
            return k, x, mul_add(x, c, one)

        k, x_key, u_key = _split(state[0], 3)
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_normal,
                                 (x_key, zero, c_(-1)))
        u = _uniform(u_key, (), dtype, 0.0, 1.0)
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = _split(key)
    _, _, v3, _ = lax.while_loop(rejected, propose, (key, zero, one, c_(2)))
    if log_space:
        log_u = lax.neg(_exponential(subkey, (), dtype))
        boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_u, zero)), zero,
                           lax.mul(log_u, lax.div(one, alpha_orig)))
        return lax.add(lax.add(xla_log(d), xla_log(v3)), boost)
    u = lax.sub(one, _uniform(subkey, (), dtype, 0.0, 1.0))
    boost = lax.select(boost_mask, one, lax.pow(u, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v3), boost)


def _gamma(name: str, key: Any, a: Any, shape: Any, dtype: Any, log_space: bool) -> Any:
    key = check_key(name, key)
    dtype = _dtype(name, dtype, "f")
    shape = _param_shape(name, shape, a)
    a = _full(_as(a, dtype), shape)
    n = math.prod(shape)
    if n == 0:
        return a
    keys = split_key(key, (n,))
    one = lambda k, alpha: _gamma_one(k, alpha, log_space)  # noqa: E731
    return lax.reshape(vmap(one)(keys, lax.reshape(a, (n,))), shape)


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
    shape = _param_shape("beta", shape, a, b)
    key_a, key_b = _split(key)
    log_a = loggamma(key_a, _full(_as(a, dtype), shape), shape, dtype)
    log_b = loggamma(key_b, _full(_as(b, dtype), shape), shape, dtype)
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
    _check_shape("dirichlet", shape, dims[:-1])
    logs = loggamma(key, alpha, (*shape, dims[-1]), dtype)
    top = lax.reduce_max(logs, (len(shape),))
    e = lax.exp(lax.sub(logs, lax.broadcast_in_dim(top, _dims(logs), tuple(range(len(shape))))))
    total = lax.reduce_sum(e, (len(shape),))
    return lax.div(e, lax.broadcast_in_dim(total, _dims(e), tuple(range(len(shape)))))


def t(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Student's t(df) values: ``normal * sqrt(df / 2 / gamma(df / 2))``."""
    key = check_key("t", key)
    dtype = _dtype("t", dtype, "f")
    shape = _param_shape("t", shape, df)
    key_n, key_g = _split(key)
    n = _normal_real(key_n, shape, dtype)
    half_df = lax.div(_full(_as(df, dtype), shape), _full(dtype.type(2), shape))
    g = gamma(key_g, half_df, shape, dtype)
    return lax.mul(n, lax.sqrt(lax.div(half_df, g)))


def chisquare(key: Any, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Any:
    """Chi-square(df) values: ``2 * exp(loggamma(df / 2))``."""
    key = check_key("chisquare", key)
    dtype = _dtype("chisquare", dtype, "f")
    shape = _param_shape("chisquare", shape, df)
    half_df = lax.div(_as(df, dtype), _full(dtype.type(2), _dims(df)))
    return lax.mul(lax.exp(loggamma(key, half_df, shape, dtype)), _full(dtype.type(2), shape))


def f(key: Any, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None,
      dtype: Any = None) -> Any:
    """F(dfnum, dfden) values: a ratio of scaled chi-squares."""
    key = check_key("f", key)
    dtype = _dtype("f", dtype, "f")
    shape = _param_shape("f", shape, dfnum, dfden)
    dfnum, dfden = _as(dfnum, dtype), _as(dfden, dtype)
    key_den, key_num = _split(key)
    num = lax.div(chisquare(key_num, dfnum, shape, dtype), _full(dfnum, shape))
    den = lax.div(chisquare(key_den, dfden, shape, dtype), _full(dfden, shape))
    return lax.div(num, den)


# --------------------------------------------------------------------------
# poisson
# --------------------------------------------------------------------------

_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993227684700473478, 676.520368121885098567009190444019,
            -1259.13921672240287047156078755283, 771.3234287776530788486528258894,
            -176.61502916214059906584551354, 12.507343278686904814458936853,
            -0.13857109526572011689554706, 9.984369578019570859563e-6,
            1.50563273514931155834e-7)


def _lgamma(x: Any) -> Any:
    """``log(Gamma(x))`` for x >= 1/2 (Lanczos, g = 7, 9 terms, as XLA's);
    ``lax`` has no lgamma."""
    dtype = abstractify(x).dtype
    c = lambda v: _full(dtype.type(v), _dims(x))  # noqa: E731
    z = lax.sub(x, c(1))
    series = c(_LANCZOS[0])
    for i, coefficient in enumerate(_LANCZOS[1:]):
        series = lax.add(series, lax.div(c(coefficient), lax.add(z, c(i + 1))))
    t_ = lax.add(z, c(_LANCZOS_G + 0.5))
    log_t = lax.log(t_)
    return lax.add(lax.add(c(0.5 * np.log(2 * np.pi)),
                           lax.sub(lax.mul(lax.add(z, c(0.5)), log_t), t_)), lax.log(series))


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
                     _lgamma(lax.max(lax.add(k, c(1)), c(0.5))))
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
    shape = _dims(lam) if shape is None else _shape(shape)
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
        _check_shape("normal", shape, mdims[:-1], cdims[:-2])
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
