"""``jax.scipy.special`` for numxla: the same names, signatures, dtypes and
derivatives.  The special functions XLA composes from ops (``lgamma``,
``digamma``, ``igamma``, ``betainc``, ``zeta``, Bessel ``i0e``/``i1e``,
``erfc``) are ``primitives.special``'s (``lax.*``); the rest are JAX's
formulas over them, with JAX's ``custom_jvp`` rules where JAX has them
(``logit``, ``xlogy``, ``xlog1py``, ``entr``, ``log_ndtr``, ``erfinv``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff.custom import custom_jvp

from ._util import dtype_of, logsumexp, promote_inexact, quiet

__all__ = [
    "gammaln", "gammasgn", "loggamma", "gamma", "betaln", "beta", "betainc", "factorial",
    "comb", "poch", "digamma", "polygamma", "zeta", "gammainc", "gammaincc", "multigammaln",
    "erf", "erfc", "erfinv", "expit", "logit", "logsumexp", "xlogy", "xlog1py", "entr",
    "rel_entr", "kl_div", "boxcox", "boxcox1p", "ndtr", "ndtri", "log_ndtr", "i0e", "i0",
    "i1e", "i1", "softmax", "log_softmax",
]


def _unary(name: str, fn: Any, doc: str) -> Any:
    def f(x: Any) -> Any:
        (x,) = promote_inexact(x)
        return fn(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


gammaln = _unary("gammaln", lax.lgamma, "``log|Gamma(x)|``.")
digamma = _unary("digamma", lax.digamma, "The digamma function ``psi(x)``.")
erf = _unary("erf", lax.erf, "The error function.")
erfc = _unary("erfc", lax.erfc, "The complementary error function ``1 - erf(x)``.")
expit = _unary("expit", lax.logistic, "The logistic sigmoid ``1 / (1 + exp(-x))``.")
i0e = _unary("i0e", lax.bessel_i0e, "``exp(-|x|) I0(x)``.")
i1e = _unary("i1e", lax.bessel_i1e, "``exp(-|x|) I1(x)``.")


@quiet
def i0(x: Any) -> Any:
    """The modified Bessel function of order 0."""
    (x,) = promote_inexact(x)
    return lax.exp(lax.abs(x)) * lax.bessel_i0e(x)


@quiet
def i1(x: Any) -> Any:
    """The modified Bessel function of order 1."""
    (x,) = promote_inexact(x)
    return lax.exp(lax.abs(x)) * lax.bessel_i1e(x)


# erfinv: lax.erf_inv with JAX's derivative sqrt(pi)/2 exp(erfinv(x)^2)
@custom_jvp
def _erfinv(x: Any) -> Any:
    return lax.erf_inv(x)


@_erfinv.defjvp
def _erfinv_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    y = _erfinv(x)
    return y, t * float(np.sqrt(np.pi) / 2) * lax.exp(y * y)


def erfinv(x: Any) -> Any:
    """The inverse error function."""
    (x,) = promote_inexact(x)
    return _erfinv(x)


# --------------------------------------------------------------------------
# gamma, beta and relatives
# --------------------------------------------------------------------------

@quiet
def gammasgn(x: Any) -> Any:
    """The sign of Gamma(x): NaN at the poles and NaN."""
    (x,) = promote_inexact(x)
    floor_x = lax.floor(x)
    negative = x < 0
    nan = (negative & (x == floor_x)) | xnp.isnan(x)
    minus = (negative & (xnp.fmod(floor_x, 2) != 0)) | ((x == 0) & xnp.signbit(x))
    return xnp.where(nan, np.nan, xnp.where(minus, -1.0, 1.0)).astype(dtype_of(x))


@quiet
def loggamma(x: Any) -> Any:
    """``log(Gamma(x))`` for real x > 0 (NaN elsewhere)."""
    (x,) = promote_inexact(x)
    return xnp.where(x > 0, lax.lgamma(x), np.nan)


@quiet
def gamma(x: Any) -> Any:
    """The gamma function (signed)."""
    (x,) = promote_inexact(x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


def _algdiv(a: Any, b: Any) -> Any:
    """``lgamma(b) - lgamma(a + b)`` for b >= 8 (TOMS 708's ALGDIV, as JAX's)."""
    c = (0.0833333333333333, -0.00277777777760991, 0.00079365066682539,
         -0.00059520293135187, 0.000837308034031215, -0.00165322962780713)
    h = a / b
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s = [1.0]
    for _ in range(5):
        s.append(1.0 + (x + x2 * s[-1]))
    t = (1.0 / b) ** 2
    w = c[5] * s[5] * t
    for k in range(4, 0, -1):
        w = (w + c[k] * s[k]) * t
    w = (w + c[0]) * (x / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return xnp.where(u <= v, w - v - u, w - u - v)


@quiet
def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)|``, accurate for large ``b`` (JAX's algorithm)."""
    a, b = promote_inexact(a, b)
    a, b = xnp.minimum(a, b), xnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return xnp.where(b < 8, small_b, large_b)


@quiet
def beta(a: Any, b: Any) -> Any:
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)``."""
    a, b = promote_inexact(a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * lax.exp(betaln(a, b))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function (differentiable in ``x``)."""
    return lax.betainc(*promote_inexact(a, b, x))


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function ``P(a, x)``."""
    return lax.igamma(*promote_inexact(a, x))


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function ``Q(a, x)``."""
    return lax.igammac(*promote_inexact(a, x))


@quiet
def factorial(n: Any, exact: bool = False) -> Any:
    """``Gamma(n + 1)`` (0 for n < 0); ``exact=True`` is not supported, as JAX's."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_inexact(n)
    return xnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


@quiet
def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """The number of combinations of ``N`` things taken ``k`` at a time."""
    N, k = promote_inexact(N, k)
    if repetition:
        return xnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    n, kk = xnp.where(ok, N, 0.0), xnp.where(ok, k, 0.0)
    out = lax.exp(lax.lgamma(n + 1) - lax.lgamma(kk + 1) - lax.lgamma(n + 1 - kk))
    return xnp.where(ok, out, 0.0)


@custom_jvp
@quiet
def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol ``Gamma(z + m) / Gamma(z)``."""
    z, m = promote_inexact(z, m)
    return xnp.where(m == 0.0, np.asarray(1, dtype_of(z)), gamma(z + m) / gamma(z))


@poch.defjvp
def _poch_jvp(primals: tuple, tangents: tuple) -> tuple:
    (z, m), (tz, tm) = primals, tangents
    out = poch(z, m)
    return out, ((digamma(z + m) - digamma(z)) * tz + digamma(z + m) * tm) * out


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma; ``n`` must be of integer type."""
    if not np.issubdtype(dtype_of(n), np.integer):
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                         f"{dtype_of(n)}.")
    n, x = promote_inexact(n, x)
    return lax.polygamma(n, x)


def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function ``zeta(x, q)`` (the Riemann one, ``q=None``,
    is not implemented, as JAX's)."""
    if q is None:
        raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                                  "compute the Hurwitz Zeta function.")
    return lax.zeta(*promote_inexact(x, q))


@quiet
def multigammaln(a: Any, d: int) -> Any:
    """The log of the multivariate gamma function of dimension ``d``."""
    d = int(d)
    (a,) = promote_inexact(a)
    constant = 0.25 * d * (d - 1) * float(np.log(np.pi))
    b = np.arange(d, dtype=dtype_of(a)) / 2
    res = xnp.sum(lax.lgamma(xnp.expand_dims(a, -1) - b), axis=-1)
    return res + constant


# --------------------------------------------------------------------------
# logistic, logs, entropies
# --------------------------------------------------------------------------

@custom_jvp
@quiet
def logit(x: Any) -> Any:
    """``log(x / (1 - x))``."""
    (x,) = promote_inexact(x)
    return lax.log(x / (1 - x))


logit.defjvps(lambda g, ans, x: g / (x * (1 - x)))


@custom_jvp
@quiet
def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, 0 where ``x == 0`` (unless y is NaN)."""
    x, y = promote_inexact(x, y)
    return xnp.where((x != 0.0) | xnp.isnan(y), x * lax.log(y), xnp.zeros_like(x))


@xlogy.defjvp
def _xlogy_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, y), (tx, ty) = primals, tangents
    out = xlogy(x, y)
    return out, (tx * lax.log(y) + ty * x / y).astype(dtype_of(out))


@custom_jvp
@quiet
def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, 0 where ``x == 0`` (unless y is NaN)."""
    x, y = promote_inexact(x, y)
    return xnp.where((x != 0.0) | xnp.isnan(y), x * lax.log1p(y), xnp.zeros_like(x))


@xlog1py.defjvp
def _xlog1py_jvp(primals: tuple, tangents: tuple) -> tuple:
    (x, y), (tx, ty) = primals, tangents
    out = xlog1py(x, y)
    return out, (tx * lax.log1p(y) + ty * x / (1 + y)).astype(dtype_of(out))


@custom_jvp
def _xlogx(x: Any) -> Any:
    return xlogy(x, x)


_xlogx.defjvps(lambda g, ans, x: g * (lax.log(x) + 1))


@quiet
def entr(x: Any) -> Any:
    """``-x log(x)`` (0 at 0, -inf for x < 0)."""
    (x,) = promote_inexact(x)
    return xnp.where(x < 0, -np.inf, -_xlogx(x)).astype(dtype_of(x))


@quiet
def rel_entr(p: Any, q: Any) -> Any:
    """``p log(p / q)`` (0 at p == 0 <= q, inf where undefined)."""
    p, q = promote_inexact(p, q)
    both = (p > 0) & (q > 0)
    one_zero = (p == 0) & (q >= 0)
    sp, sq = xnp.where(both, p, 1), xnp.where(both, q, 1)
    value = _xlogx(sp) - xlogy(sp, sq)
    return xnp.where(both, value, xnp.where(one_zero, 0.0, np.inf)).astype(dtype_of(p))


def kl_div(p: Any, q: Any) -> Any:
    """``p log(p / q) - p + q``."""
    p, q = promote_inexact(p, q)
    return rel_entr(p, q) - p + q


@quiet
def boxcox(x: Any, lmbda: Any) -> Any:
    """The Box-Cox transformation ``(x**lmbda - 1) / lmbda`` (``log x`` at 0)."""
    x, lmbda = promote_inexact(x, lmbda)
    zero = lmbda == 0
    safe = xnp.where(zero, 1, lmbda)
    log_x = lax.log(x)
    return xnp.where(zero, log_x, lax.expm1(safe * log_x) / safe)


@quiet
def boxcox1p(x: Any, lmbda: Any) -> Any:
    """Box-Cox of ``1 + x``."""
    x, lmbda = promote_inexact(x, lmbda)
    zero = lmbda == 0
    safe = xnp.where(zero, 1, lmbda)
    log1p_x = lax.log1p(x)
    return xnp.where(zero, log1p_x, lax.expm1(safe * log1p_x) / safe)


# --------------------------------------------------------------------------
# the normal distribution function and its inverse
# --------------------------------------------------------------------------

def _real_float(name: str, x: Any) -> Any:
    x = xnp.asarray(x)
    if dtype_of(x) not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dtype_of(x)} is not supported, see docstring for "
                        f"supported types.")
    return x


@quiet
def _ndtr(x: Any) -> Any:
    half_sqrt_2 = float(0.5 * np.sqrt(2.0))
    w = x * half_sqrt_2
    z = lax.abs(w)
    y = xnp.where(z < half_sqrt_2, 1.0 + lax.erf(w),
                  xnp.where(w > 0.0, 2.0 - lax.erfc(z), lax.erfc(z)))
    return 0.5 * y


def ndtr(x: Any) -> Any:
    """The standard normal CDF (f32 or f64 input)."""
    return _ndtr(_real_float("ndtr", x))


# Cephes' ndtri rational approximations, highest degree first
_NDTRI_P0 = (-59.96335010141079, 98.00107541859997, -56.67628574690703, 13.931260938727968,
             -1.2391658386738125)
_NDTRI_Q0 = (1.0, 1.9544885833814176, 4.676279128988815, 86.36024213908905,
             -225.46268785411937, 200.26021238006066, -82.03722561683334, 15.90562251262117,
             -1.1833162112133)
_NDTRI_P1 = (4.0554489230596245, 31.525109459989388, 57.16281922464213, 44.08050738932008,
             14.684956192885803, 2.1866330685079025, -0.1402560791713545, -0.03504246268278482,
             -0.0008574567851546854)
_NDTRI_Q1 = (1.0, 15.779988325646675, 45.39076351288792, 41.3172038254672, 15.04253856929075,
             2.504649462083094, -0.14218292285478779, -0.03808064076915783,
             -0.0009332594808954574)
_NDTRI_P2 = (3.2377489177694603, 6.915228890689842, 3.9388102529247444, 1.3330346081580755,
             0.20148538954917908, 0.012371663481782003, 0.00030158155350823543,
             2.6580697468673755e-06, 6.239745391849833e-09)
_NDTRI_Q2 = (1.0, 6.02427039364742, 3.6798356385616087, 1.3770209948908132,
             0.21623699359449663, 0.013420400608854318, 0.00032801446468212774,
             2.8924786474538068e-06, 6.790194080099813e-09)


def _polyval(coefficients: tuple[float, ...], x: Any) -> Any:
    dtype = dtype_of(x).type
    out = dtype(coefficients[0]) * xnp.ones_like(x)
    for c in coefficients[1:]:
        out = out * x + dtype(c)
    return out


@quiet
def _ndtri(p: Any) -> Any:
    dtype = dtype_of(p).type
    mcp = xnp.where(p > dtype(-np.expm1(-2.0)), 1.0 - p, p)
    mcp = xnp.where(mcp == 0.0, 0.5, mcp)
    w = mcp - 0.5
    ww = w * w
    x_big = w + w * ww * (_polyval(_NDTRI_P0, ww) / _polyval(_NDTRI_Q0, ww))
    x_big = x_big * -dtype(np.sqrt(2.0 * np.pi))
    z = lax.sqrt(-2.0 * lax.log(mcp))
    first = z - lax.log(z) / z
    inv_z = 1.0 / z
    x_small = first - _polyval(_NDTRI_P2, inv_z) / _polyval(_NDTRI_Q2, inv_z) / z
    x_other = first - _polyval(_NDTRI_P1, inv_z) / _polyval(_NDTRI_Q1, inv_z) / z
    x = xnp.where(mcp > dtype(np.exp(-2.0)), x_big, xnp.where(z >= 8.0, x_small, x_other))
    x = xnp.where(p > dtype(1.0 - np.exp(-2.0)), x, -x)
    return xnp.where(p == 0.0, -np.inf, xnp.where(p == 1.0, np.inf, x)).astype(dtype_of(p))


def ndtri(p: Any) -> Any:
    """The inverse of ``ndtr`` (f32 or f64 input)."""
    return _ndtri(_real_float("ndtri", p))


_LOG_NDTR_BOUNDS = {np.dtype(np.float64): (-20.0, 8.0), np.dtype(np.float32): (-10.0, 5.0)}


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    """The asymptotic series of log(ndtr(x)) for very negative x."""
    x2 = x * x
    log_scale = -0.5 * x2 - lax.log(-x) - float(0.5 * np.log(2.0 * np.pi))
    if series_order <= 0:
        return log_scale
    even, odd, x2n = xnp.zeros_like(x), xnp.zeros_like(x), x2
    for n in range(1, series_order + 1):
        y = float(np.prod(np.arange(2 * n - 1, 1, -2))) / x2n
        if n % 2:
            odd = odd + y
        else:
            even = even + y
        x2n = x2n * x2
    return log_scale + lax.log(1.0 + even - odd)


@quiet
def _log_ndtr(x: Any, series_order: int = 3) -> Any:
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if not 0 <= series_order <= 30:
        raise ValueError("series_order must be non-negative and <= 30.")
    x = xnp.asarray(x)
    if dtype_of(x) not in _LOG_NDTR_BOUNDS:
        raise TypeError(f"x.dtype={dtype_of(x)} is not supported.")
    lower, upper = _LOG_NDTR_BOUNDS[dtype_of(x)]
    above = x > upper
    res = _ndtr(xnp.where(above, -x, xnp.maximum(x, lower)))
    return xnp.where(above, -res, xnp.where(x > lower, lax.log(res),
                                            _log_ndtr_lower(xnp.minimum(x, lower), series_order)))


_log_ndtr_custom = custom_jvp(_log_ndtr, nondiff_argnums=(1,))


@_log_ndtr_custom.defjvp
def _log_ndtr_jvp(series_order: int, primals: tuple, tangents: tuple) -> tuple:
    (x,), (t,) = primals, tangents
    out = _log_ndtr_custom(x, series_order)
    log_pdf = -0.5 * x * x - float(np.log(np.sqrt(2 * np.pi)))
    return out, t * lax.exp(log_pdf - out)


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """``log(ndtr(x))``, accurate far into both tails (f32 or f64 input); its
    derivative is ``exp(log_pdf(x) - log_ndtr(x))``."""
    return _log_ndtr_custom(x, series_order)


# --------------------------------------------------------------------------
# softmax (scipy's signature: keyword-only axis, default all axes)
# --------------------------------------------------------------------------

def softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default)."""
    from numxla.nn import softmax as nn_softmax
    return nn_softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: int | tuple[int, ...] | None = None) -> Any:
    """``x - logsumexp(x)`` over ``axis`` (all axes by default)."""
    from numxla.nn import log_softmax as nn_log_softmax
    return nn_log_softmax(x, axis=axis)


# exponential and trigonometric integrals, Spence's function, Bessel J_n, erfcx and
# the Bernoulli numbers (``_special_more``); wofz, dawsn, fresnel and owens_t
# (``_special_error``); hyp1f1, hyp2f1 and sph_harm_y (``_special_hyper``)
from ._special_error import *  # noqa: E402,F401,F403
from ._special_error import __all__ as _error
from ._special_hyper import *  # noqa: E402,F401,F403
from ._special_hyper import __all__ as _hyper
from ._special_more import *  # noqa: E402,F401,F403
from ._special_more import __all__ as _more

__all__ += _more + _error + _hyper
