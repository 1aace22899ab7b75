"""``primitives.special`` (``lax.lgamma``, ``lax.igamma``...) and
``numxla.scipy.special``/``numxla.scipy.stats`` against SciPy, JAX's edge
values, and finite differences for the derivatives; a sample under ``jit``
(the loops of igamma/betainc take numxla 10-15 s to compile, so they are
checked eagerly and under grad/vmap only)."""
import numpy as np
import pytest
import scipy.special as sp
import scipy.stats as ss

import numxla as jax
import numxla.primitives as lax
from numxla.scipy import special as S
from numxla.scipy import stats as st

# JAX 0.10.2 with jax_enable_x64, on CPU (python: jax.lax.<name>(x) for these inputs)
EDGE_X = [0., -0., -1., -2., -2.5, 1e-8, 1.0, 2.0, 1e5, np.inf, -np.inf, np.nan]
JAX_EDGES = {
    'lgamma': [np.inf, np.inf, np.inf, np.inf, -0.05624371649767457, 18.42068073818021, 0.0, 0.0,
               1051287.708973657, np.inf, np.inf, np.nan],
    'digamma': [np.nan, np.nan, np.nan, np.nan, 1.103156640645243, -100000000.57721567,
                -0.5772156649015334, 0.42278433509846747, 11.512920464961894, np.inf, np.nan,
                np.nan],
    'erfc': [1.0, 1.0, 1.8427007929497148, 1.9953222650189528, 1.999593047982555,
             0.9999999887162083, 0.15729920705028513, 0.004677734981047267, 0.0, 0.0, 2.0, np.nan],
    'bessel_i0e': [1.0, 1.0, 0.46575960759364043, 0.308508322553671, 0.27004644161220276,
                   0.99999999, 0.46575960759364043, 0.308508322553671, 0.0012615678379767766,
                   0.0, 0.0, np.nan],
    'bessel_i1e': [0.0, -0.0, -0.2079104153497085, -0.2152692892489377, -0.20658464953126654,
                   4.999999949999999e-09, 0.2079104153497085, 0.2152692892489377,
                   0.0012615615301218171, 0.0, -0.0, np.nan],
}
# (a, x) -> jax.lax.igamma / igammac; (a, b, x) -> betainc; (x, q) -> zeta; (m, x) -> polygamma
JAX_DOMAINS = [
    (lax.igamma, ([0., 0., 1., -1., 2., np.inf, 2., np.nan, 0.5],
                  [0., 1., 0., 1., -1., 1., np.inf, 1., 30.]),
     [np.nan, 1.0, 0.0, np.nan, np.nan, np.nan, 1.0, np.nan, 0.9999999999999906]),
    (lax.igammac, ([0., 0., 1., -1., 2., np.inf, 2., np.nan, 0.5],
                   [0., 1., 0., 1., -1., 1., np.inf, 1., 30.]),
     [np.nan, 0.0, 1.0, np.nan, np.nan, np.nan, 0.0, np.nan, 9.485737571073854e-15]),
    (lax.betainc, ([1., 0., 2., 2., 0., 1., np.inf, 1.], [0., 2., 2., 2., 2., -1., 1., 2.],
                   [0.5, 0., 1., 1.5, 0.5, 0.5, 0.5, np.nan]),
     [0.0, 0.0, 1.0, np.nan, 1.0, np.nan, 0.0, np.nan]),
    (lax.zeta, ([0.5, 1.0, 2.0, 3.0, 2.0, 2.5, 4.0], [1.0, 1.0, 0.0, -1.0, -1.5, -2.0, 1e-3]),
     [np.nan, np.inf, np.inf, np.nan, 9.379246644989122, np.nan, 1000000000001.0779]),
    (lax.polygamma, ([0., 1., 2., -1., 1.5, 3.], [0., -1., 0.5, 1., 1., -2.5]),
     [np.nan, np.inf, -16.828796644234295, np.nan, np.nan, 194.74787621918773]),
]


@pytest.mark.parametrize("name", sorted(JAX_EDGES))
def test_lax_edge_values_as_jax(name):
    got = getattr(lax, name)(np.array(EDGE_X))
    np.testing.assert_allclose(got, JAX_EDGES[name], rtol=1e-15, atol=1e-15)
    assert np.array_equal(np.signbit(got), np.signbit(JAX_EDGES[name]))  # +-0, +-inf


@pytest.mark.parametrize("fn,args,expected", JAX_DOMAINS, ids=lambda v: getattr(v, "__name__", ""))
def test_lax_domains_as_jax(fn, args, expected):
    np.testing.assert_allclose(fn(*map(np.array, args)), expected, rtol=1e-14)


UNARY = [(lax.lgamma, sp.gammaln, np.linspace(-20.5, 40, 611)),
         (lax.digamma, sp.digamma, np.linspace(-20.3, 40, 603)),
         (lax.erfc, sp.erfc, np.linspace(-6, 27, 661)),
         (lax.bessel_i0e, sp.i0e, np.linspace(-50, 50, 401)),
         (lax.bessel_i1e, sp.i1e, np.linspace(-50, 50, 401))]


@pytest.mark.parametrize("fn,ref,x", UNARY, ids=lambda v: getattr(v, "__name__", ""))
def test_lax_unary_against_scipy(fn, ref, x):
    """Errors relative to max(1, |f|) (lgamma and digamma cross zero); erfc's
    tail relative to its value."""
    for dtype, tol in ((np.float64, 2e-13), (np.float32, 3e-6)):
        xs = x.astype(dtype)
        got = np.asarray(fn(xs))
        assert got.dtype == dtype
        want = ref(xs.astype(np.float64))
        err = np.abs(got - want) / np.maximum(np.abs(want), 1)
        assert err.max() < tol, (dtype, xs[np.argmax(err)], err.max())
        if fn is lax.erfc:
            tail = want > 100 * np.finfo(dtype).tiny
            np.testing.assert_allclose(got[tail], want[tail], rtol=2 * tol)
    half = fn(x[:50].astype(np.float16))
    assert half.dtype == np.float16  # computed in f32, as XLA does
    np.testing.assert_allclose(half, ref(x[:50].astype(np.float16).astype(np.float64)),
                               rtol=2e-3, atol=2e-3)


def test_lax_incomplete_gamma_beta_zeta_polygamma():
    rng = np.random.default_rng(0)
    a = np.concatenate([rng.uniform(0.01, 20, 150), rng.uniform(20, 400, 50)])
    x = np.concatenate([rng.uniform(0, 30, 150), rng.uniform(0, 600, 50)])
    for dtype, rtol in ((np.float64, 5e-12), (np.float32, 5e-4)):
        A, X = a.astype(dtype), x.astype(dtype)
        for fn, ref in ((lax.igamma, sp.gammainc), (lax.igammac, sp.gammaincc)):
            got = np.asarray(fn(A, X))
            want = ref(A.astype(np.float64), X.astype(np.float64))
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want, rtol=rtol, atol=np.finfo(dtype).tiny * 1e10)
    b, u = rng.uniform(0.05, 30, 100), rng.uniform(0, 1, 100)
    np.testing.assert_allclose(lax.betainc(a[:100], b, u), sp.betainc(a[:100], b, u), rtol=1e-12,
                               atol=1e-300)
    a32, b32, u32 = (np.float32(v[:20]) for v in (a, b, u))
    np.testing.assert_allclose(lax.betainc(a32, b32, u32), sp.betainc(a32, b32, u32), rtol=1e-4,
                               atol=1e-30)
    s, q = rng.uniform(1.1, 20, 100), rng.uniform(0.1, 30, 100)
    np.testing.assert_allclose(lax.zeta(s, q), sp.zeta(s, q), rtol=2e-15)
    m = np.arange(100) % 5
    np.testing.assert_allclose(lax.polygamma(m.astype(float), q), sp.polygamma(m, q), rtol=1e-14)
    h = 1e-6
    da = (sp.gammainc(a[:30] + h, x[:30]) - sp.gammainc(a[:30] - h, x[:30])) / (2 * h)
    np.testing.assert_allclose(lax.igamma_grad_a(a[:30], x[:30]), da, rtol=1e-6, atol=1e-9)
    # a Gamma(a, 1) sample's derivative in a: -(dP/da) / (dP/dx)
    keep = ss.gamma.pdf(x[:30], a[:30]) > 1e-3
    np.testing.assert_allclose(lax.random_gamma_grad(a[:30], x[:30])[keep],
                               (-da / ss.gamma.pdf(x[:30], a[:30]))[keep], rtol=1e-5)


def _fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_lax_special_derivatives():
    x = np.linspace(0.3, 9, 12)
    vgrad = lambda f: np.asarray(jax.vmap(jax.grad(f))(x))  # noqa: E731
    np.testing.assert_allclose(vgrad(lax.lgamma), sp.digamma(x), rtol=1e-13)
    np.testing.assert_allclose(vgrad(lax.digamma), sp.polygamma(1, x), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.hessian(lax.lgamma))(x)),
                               sp.polygamma(1, x), rtol=1e-13)
    np.testing.assert_allclose(vgrad(lax.erfc), -2 / np.sqrt(np.pi) * np.exp(-x * x), rtol=1e-14)
    np.testing.assert_allclose(vgrad(lax.bessel_i0e), sp.i1e(x) - sp.i0e(x), rtol=1e-13)
    np.testing.assert_allclose(vgrad(lax.bessel_i1e), _fd(sp.i1e, x), rtol=1e-8)
    assert float(jax.grad(lax.bessel_i1e)(0.0)) == 0.5
    np.testing.assert_allclose(vgrad(lambda v: lax.polygamma(2.0, v)), sp.polygamma(3, x),
                               rtol=1e-13)
    np.testing.assert_allclose(vgrad(lambda v: lax.zeta(3.0, v)), -3 * sp.zeta(4, x), rtol=1e-12)
    s = x + 1.5
    np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(lambda v: lax.zeta(v, 2.0)))(s)),
                               _fd(lambda v: sp.zeta(v, 2.0), s), rtol=1e-7)
    a = x[::-1]
    ga, gx = (np.asarray(g) for g in jax.vmap(jax.grad(lax.igamma, argnums=(0, 1)))(a, x))
    np.testing.assert_allclose(ga, _fd(lambda v: sp.gammainc(v, x), a), rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(gx, np.exp(-x + (a - 1) * np.log(x) - sp.gammaln(a)), rtol=1e-13)
    gc = np.asarray(jax.vmap(jax.grad(lax.igammac, argnums=(0, 1)))(a, x)[0])
    np.testing.assert_allclose(gc, -ga, rtol=1e-13)
    u = np.linspace(0.05, 0.95, 12)
    gb = np.asarray(jax.vmap(jax.grad(lax.betainc, argnums=2))(a, x, u))
    np.testing.assert_allclose(gb, _fd(lambda v: sp.betainc(a, x, v), u), rtol=1e-6, atol=1e-9)


SPECIAL = [  # (name, scipy reference, arguments)
    ("gammaln", sp.gammaln, (np.linspace(-9.5, 30, 80),), dict(atol=1e-14, atol32=1e-6)),
    ("gammasgn", sp.gammasgn, (np.array([-2.5, -1.5, -0.5, 0.5, 3.0, -0.0, 0.0, -2.0]),)),
    ("gamma", sp.gamma, (np.array([-2.5, -1.5, -0.5, 0.5, 3.0, 10.0, 7.3]),)),
    ("loggamma", lambda v: np.where(v > 0, sp.loggamma(v), np.nan), (np.array([0.5, 3.0, -1.5]),)),
    ("digamma", lambda v: np.where((v <= 0) & (v == np.floor(v)), np.nan, sp.digamma(v)),
     (np.linspace(-9.5, 30, 80),)),  # NaN at the poles, as XLA's (SciPy: -inf at 0)
    # JAX's betaln (TOMS 708's algdiv for b >= 8) is accurate to ~1e-8 there
    ("betaln", sp.betaln, (np.linspace(0.1, 50, 40), np.linspace(60, 0.3, 40)), dict(rtol=1e-8)),
    ("beta", sp.beta, (np.linspace(0.1, 5, 10), np.linspace(5, 0.5, 10))),
    ("betainc", sp.betainc, (np.linspace(0.2, 9, 10), np.linspace(9, 0.5, 10),
                             np.linspace(0.01, 0.99, 10))),
    ("gammainc", sp.gammainc, (np.linspace(0.2, 30, 20), np.linspace(30, 0.1, 20))),
    ("gammaincc", sp.gammaincc, (np.linspace(0.2, 30, 20), np.linspace(30, 0.1, 20))),
    ("factorial", sp.factorial, (np.array([-1.0, 0.0, 3.0, 5.5, 20.0]),)),
    ("comb", sp.comb, (np.array([5.0, 10.0, 3.0, 7.0]), np.array([2.0, 3.0, 5.0, 0.0]))),
    ("poch", sp.poch, (np.array([1.5, 2.0, 3.0, 0.3]), np.array([2.0, 0.0, 1.5, 4.0]))),
    ("erf", sp.erf, (np.linspace(-5, 5, 21),)),
    ("erfc", sp.erfc, (np.linspace(-5, 25, 31),)),
    ("erfinv", sp.erfinv, (np.linspace(-0.999, 0.999, 21),)),
    ("expit", sp.expit, (np.linspace(-40, 40, 21),)),
    ("logit", sp.logit, (np.linspace(0, 1, 21),)),
    ("xlogy", sp.xlogy, (np.array([0.0, 1.0, 2.0, 0.0, 3.0]),
                         np.array([0.0, 2.0, 3.0, np.nan, 0.5]))),
    ("xlog1py", sp.xlog1py, (np.array([0.0, 1.0, 2.0]), np.array([-1.0, 2.0, 1e-10]))),
    ("entr", sp.entr, (np.array([-1.0, 0.0, 0.5, 2.0]),)),
    ("rel_entr", sp.rel_entr, (np.array([0.0, 1.0, 2.0, -1.0, 0.0]),
                               np.array([0.0, 2.0, 0.0, 1.0, 1.0]))),
    ("kl_div", sp.kl_div, (np.array([0.0, 1.0, 2.0]), np.array([0.5, 2.0, 3.0]))),
    ("boxcox", sp.boxcox, (np.array([0.5, 2.0, 3.0]), np.array([0.0, 0.5, -1.0]))),
    ("boxcox1p", sp.boxcox1p, (np.array([0.5, 2.0, 1e-9]), np.array([0.0, 0.5, 2.0]))),
    ("ndtr", sp.ndtr, (np.linspace(-38, 9, 48),)),
    ("ndtri", sp.ndtri, (np.concatenate([[0, 1e-300, 1e-20], np.linspace(0, 1, 21),
                                         [1 - 1e-16]]),)),
    ("log_ndtr", sp.log_ndtr, (np.linspace(-19, 9, 57),),
     dict(atol=1e-15, atol32=3e-8)),  # log(ndtr(x)) = log(1 - tiny) for x up to 8, as JAX's
    ("i0", sp.i0, (np.linspace(-30, 30, 25),)),
    ("i1", sp.i1, (np.linspace(-30, 30, 25),)),
    ("i0e", sp.i0e, (np.linspace(-30, 30, 25),)),
    ("i1e", sp.i1e, (np.linspace(-30, 30, 25),)),
    ("zeta", sp.zeta, (np.linspace(1.5, 9, 8), np.linspace(0.1, 5, 8))),
    ("polygamma", sp.polygamma, (np.arange(8) % 4, np.linspace(0.1, 9, 8))),
    ("multigammaln", lambda v: sp.multigammaln(v, 3), (np.array([2.0, 3.5, 10.0]),)),
    ("logsumexp", sp.logsumexp, (np.linspace(-30, 700, 9),)),
]


SPECIAL = [c if len(c) == 4 else (*c, {}) for c in SPECIAL]  # (..., tolerances)


@pytest.mark.parametrize("name,ref,args,tol", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_against_scipy(name, ref, args, tol):
    fn = getattr(S, name) if name != "multigammaln" else (lambda v: S.multigammaln(v, 3))
    got = fn(*args)
    assert np.asarray(got).dtype == np.float64
    tol = dict(tol)
    atol32 = tol.pop("atol32", 5 * np.finfo(np.float32).tiny)
    np.testing.assert_allclose(got, ref(*args), **{"rtol": 1e-12, "atol": 1e-300, **tol})
    if name in ("polygamma", "multigammaln"):
        return
    f32 = fn(*(np.asarray(a, np.float32) for a in args))
    assert np.asarray(f32).dtype == np.float32
    with np.errstate(all="ignore"):
        want = ref(*(np.asarray(a, np.float32).astype(np.float64) for a in args))
    np.testing.assert_allclose(np.asarray(f32, np.float64), want, rtol=5e-5, atol=atol32)


def test_special_promotion_and_errors():
    assert S.gammaln(np.int32(3)).dtype == np.float64  # integers: the default float
    assert S.erf(np.arange(3)).dtype == np.float64
    assert S.gammaln(np.float32(2)).dtype == np.float32
    with pytest.raises(ValueError, match="integer"):
        S.polygamma(1.0, 2.0)
    with pytest.raises(NotImplementedError):
        S.zeta(2.0)
    with pytest.raises(TypeError):
        S.ndtr(np.arange(3))
    np.testing.assert_allclose(S.log_ndtr(-40.0, series_order=5), sp.log_ndtr(-40.0), rtol=1e-12)
    value, sign = S.logsumexp(np.array([[1.0, 2.0], [3.0, 1.0]]), axis=1,
                              b=np.array([[1.0, -1.0], [1.0, 2.0]]), return_sign=True)
    want, want_sign = sp.logsumexp([[1.0, 2.0], [3.0, 1.0]], axis=1, b=[[1.0, -1.0], [1.0, 2.0]],
                                   return_sign=True)
    np.testing.assert_allclose(value, want)
    np.testing.assert_array_equal(sign, want_sign)
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(S.softmax(m), np.exp(m) / np.exp(m).sum(), rtol=1e-14)
    np.testing.assert_allclose(S.log_softmax(m, axis=1), m - sp.logsumexp(m, axis=1, keepdims=True))


def test_special_derivatives():
    x = np.linspace(0.05, 0.95, 9)
    vgrad = lambda f, *a: np.asarray(jax.vmap(jax.grad(f))(*a))  # noqa: E731
    np.testing.assert_allclose(vgrad(S.logit, x), 1 / (x * (1 - x)), rtol=1e-14)
    np.testing.assert_allclose(vgrad(S.erfinv, x), np.sqrt(np.pi) / 2 * np.exp(sp.erfinv(x) ** 2),
                               rtol=1e-13)
    np.testing.assert_allclose(vgrad(S.entr, x), -np.log(x) - 1, rtol=1e-14)
    np.testing.assert_allclose(vgrad(S.ndtri, x), _fd(sp.ndtri, x), rtol=1e-7)
    t = np.array([-60.0, -25.0, -5.0, 0.0, 3.0, 10.0])
    np.testing.assert_allclose(vgrad(S.log_ndtr, t), np.exp(-t * t / 2 - np.log(np.sqrt(2 * np.pi))
                                                           - sp.log_ndtr(t)), rtol=1e-8)
    # xlogy: finite at x = 0 where x log(y) would be 0 * -inf
    assert float(S.xlogy(0.0, 0.0)) == 0.0
    assert float(jax.grad(S.xlogy, argnums=1)(0.0, 2.0)) == 0.0
    assert float(jax.grad(S.xlogy)(1.0, 2.0)) == pytest.approx(np.log(2))
    assert float(jax.grad(S.xlog1py, argnums=1)(2.0, 1.0)) == pytest.approx(1.0)
    z, m = np.array([1.5, 2.0, 3.2]), np.array([2.0, 0.5, 1.0])
    gz, gm = (np.asarray(g) for g in jax.vmap(jax.grad(S.poch, argnums=(0, 1)))(z, m))
    np.testing.assert_allclose(gz, _fd(lambda v: sp.poch(v, m), z), rtol=1e-7)
    np.testing.assert_allclose(gm, _fd(lambda v: sp.poch(z, v), m), rtol=1e-7)
    np.testing.assert_allclose(vgrad(lambda a: S.betaln(a, 3.0), z),
                               sp.digamma(z) - sp.digamma(z + 3), rtol=1e-12)


D = np.linspace(-4, 5, 19)
POS = np.linspace(0.05, 9, 19)
U = np.linspace(0.02, 0.98, 19)
STATS = [  # (distribution, method, scipy reference, arguments)
    ("norm", "logpdf", ss.norm.logpdf, (D, 0.3, 1.7)), ("norm", "pdf", ss.norm.pdf, (D, 0.3, 1.7)),
    ("norm", "cdf", ss.norm.cdf, (D * 3, 0.3, 1.7)),
    ("norm", "logcdf", ss.norm.logcdf, (D * 8, 1, 2)),
    ("norm", "sf", ss.norm.sf, (D * 3, 0.3, 1.7)), ("norm", "logsf", ss.norm.logsf, (D * 8, 1, 2)),
    ("norm", "ppf", ss.norm.ppf, (U, 0.3, 1.7)), ("norm", "isf", ss.norm.isf, (U, 0.3, 1.7)),
    ("t", "logpdf", ss.t.logpdf, (D, POS, 0.5, 2.0)), ("t", "pdf", ss.t.pdf, (D, 3.0)),
    ("gamma", "logpdf", ss.gamma.logpdf, (D, POS, -1.0, 1.5)),
    ("gamma", "pdf", ss.gamma.pdf, (POS, 2.0)),
    ("gamma", "cdf", ss.gamma.cdf, (D, POS, -1.0, 1.5)), ("gamma", "sf", ss.gamma.sf, (D, 2.5)),
    ("gamma", "logcdf", ss.gamma.logcdf, (POS, 2.5)),
    ("gamma", "logsf", ss.gamma.logsf, (POS, 2.5)),
    ("beta", "logpdf", ss.beta.logpdf, (U, POS, POS[::-1])),
    ("beta", "pdf", ss.beta.pdf, (D, 2, 3, -4, 9)),
    ("beta", "cdf", ss.beta.cdf, (U, POS, POS[::-1])), ("beta", "sf", ss.beta.sf, (U, 2.0, 3.0)),
    ("beta", "logcdf", ss.beta.logcdf, (U, 2.0, 3.0)),
    ("beta", "logsf", ss.beta.logsf, (U, 2.0, 3.0)),
    ("expon", "logpdf", ss.expon.logpdf, (D, -1, 2)), ("expon", "pdf", ss.expon.pdf, (D,)),
    ("expon", "cdf", ss.expon.cdf, (D, -1, 2)), ("expon", "logcdf", ss.expon.logcdf, (POS,)),
    ("expon", "sf", ss.expon.sf, (D, -1, 2)), ("expon", "logsf", ss.expon.logsf, (POS, 0.5)),
    ("expon", "ppf", ss.expon.ppf, (U, -1, 2)),
    ("laplace", "logpdf", ss.laplace.logpdf, (D, 0.5, 2)), ("laplace", "pdf", ss.laplace.pdf, (D,)),
    ("laplace", "cdf", ss.laplace.cdf, (D, 0.5, 2)),
    ("logistic", "logpdf", ss.logistic.logpdf, (D * 20, 0.5, 2)),
    ("logistic", "pdf", ss.logistic.pdf, (D,)),
    ("logistic", "cdf", ss.logistic.cdf, (D, 0.5, 2)),
    ("logistic", "sf", ss.logistic.sf, (D, 0.5, 2)),
    ("logistic", "ppf", ss.logistic.ppf, (U, 0.5, 2)),
    ("logistic", "isf", ss.logistic.isf, (U, 0.5, 2)),
    ("cauchy", "logpdf", ss.cauchy.logpdf, (D, 0.5, 2)), ("cauchy", "pdf", ss.cauchy.pdf, (D,)),
    ("cauchy", "cdf", ss.cauchy.cdf, (D, 0.5, 2)), ("cauchy", "logcdf", ss.cauchy.logcdf, (D,)),
    ("cauchy", "sf", ss.cauchy.sf, (D, 0.5, 2)), ("cauchy", "logsf", ss.cauchy.logsf, (D,)),
    ("cauchy", "ppf", ss.cauchy.ppf, (U, 0.5, 2)), ("cauchy", "isf", ss.cauchy.isf, (U, 0.5, 2)),
    ("uniform", "logpdf", ss.uniform.logpdf, (D, -1, 3)), ("uniform", "pdf", ss.uniform.pdf, (D,)),
    ("uniform", "cdf", ss.uniform.cdf, (D, -1, 3)), ("uniform", "ppf", ss.uniform.ppf, (U, -1, 3)),
    ("chi2", "logpdf", ss.chi2.logpdf, (POS, POS[::-1])),
    ("chi2", "pdf", ss.chi2.pdf, (D, 3, -4, 2)),
    ("chi2", "cdf", ss.chi2.cdf, (POS, POS[::-1])), ("chi2", "sf", ss.chi2.sf, (POS, 4.0)),
    ("chi2", "logcdf", ss.chi2.logcdf, (POS, 4.0)), ("chi2", "logsf", ss.chi2.logsf, (POS, 4.0)),
    ("pareto", "logpdf", ss.pareto.logpdf, (POS + 0.5, 2.5)),
    ("pareto", "pdf", ss.pareto.pdf, (D, 3, -4, 2)),
    ("pareto", "cdf", ss.pareto.cdf, (POS + 0.5, 2.5)),
    ("pareto", "logcdf", ss.pareto.logcdf, (POS + 1.5, 2.5)),
    ("pareto", "sf", ss.pareto.sf, (POS + 0.5, 2.5)),
    ("pareto", "logsf", ss.pareto.logsf, (POS + 0.5, 2.5)),
    ("pareto", "ppf", ss.pareto.ppf, (U, 2.5, 1, 2)),
    ("poisson", "logpmf", ss.poisson.logpmf, (np.round(POS), POS[::-1])),
    ("poisson", "pmf", ss.poisson.pmf, (np.round(D), 3.5, -2)),
    ("poisson", "cdf", ss.poisson.cdf, (np.round(POS), POS[::-1])),
    ("poisson", "entropy", ss.poisson.entropy, (np.array([0.5, 5.0, 50.0, 500.0]),)),
    ("bernoulli", "logpmf", ss.bernoulli.logpmf, (np.arange(19) % 3, U)),
    ("bernoulli", "pmf", ss.bernoulli.pmf, (np.arange(19) % 3 - 1, U, -1)),
    ("bernoulli", "cdf", ss.bernoulli.cdf, (D / 3, U)),
    ("bernoulli", "ppf", ss.bernoulli.ppf, (U, U[::-1])),
    ("geom", "logpmf", ss.geom.logpmf, (np.round(POS), U)),
    ("geom", "pmf", ss.geom.pmf, (np.round(D), 0.3)),
    ("binom", "logpmf", ss.binom.logpmf, (np.round(POS), 9, U)),
    ("binom", "pmf", ss.binom.pmf, (np.round(D), 4, 0.3)),
    ("nbinom", "logpmf", ss.nbinom.logpmf, (np.round(POS), POS[::-1], U)),
    ("nbinom", "pmf", ss.nbinom.pmf, (np.round(POS), 3, 0.4)),
]


# JAX's algorithms' own accuracy: log(ndtr(x)) near 1, betaln's algdiv, the
# entropy's truncated sum and asymptotic formula
STATS_TOL = {"norm.logcdf": dict(atol=1e-15), "norm.logsf": dict(atol=1e-15),
             "beta.logpdf": dict(rtol=2e-6), "poisson.entropy": dict(rtol=1e-7)}


@pytest.mark.parametrize("dist,method,ref,args", STATS, ids=[f"{d}.{m}" for d, m, *_ in STATS])
def test_stats_against_scipy(dist, method, ref, args):
    got = getattr(getattr(st, dist), method)(*args)
    assert np.asarray(got).dtype == np.float64
    with np.errstate(all="ignore"):
        want = ref(*args)
    np.testing.assert_allclose(got, want, **{"rtol": 5e-12, "atol": 1e-300,
                                             **STATS_TOL.get(f"{dist}.{method}", {})})


def test_multivariate_normal_and_dirichlet():
    rng = np.random.default_rng(2)
    mean = rng.normal(size=3)
    a = rng.normal(size=(3, 3))
    cov = a @ a.T + np.eye(3)
    x = rng.normal(size=(4, 2, 3))
    np.testing.assert_allclose(st.multivariate_normal.logpdf(x, mean, cov),
                               ss.multivariate_normal.logpdf(x, mean, cov), rtol=1e-13)
    np.testing.assert_allclose(st.multivariate_normal.pdf(x[0, 0], mean, cov),
                               ss.multivariate_normal.pdf(x[0, 0], mean, cov), rtol=1e-13)
    np.testing.assert_allclose(st.multivariate_normal.logpdf(x, mean, 2.0),
                               ss.multivariate_normal.logpdf(x, mean, 2.0 * np.eye(3)), rtol=1e-13)
    np.testing.assert_allclose(st.multivariate_normal.logpdf(x[..., 0], 0.5, 2.0),
                               ss.norm.logpdf(x[..., 0], 0.5, np.sqrt(2.0)), rtol=1e-13)
    covs = np.stack([cov, 2 * cov])  # a batch of covariances
    np.testing.assert_allclose(st.multivariate_normal.logpdf(x[:2, 0], mean, covs),
                               [ss.multivariate_normal.logpdf(x[i, 0], mean, covs[i])
                                for i in (0, 1)], rtol=1e-13)
    with pytest.raises(ValueError, match="incompatible"):
        st.multivariate_normal.logpdf(x, mean, np.eye(2))
    alpha = np.array([1.5, 2.0, 3.0])
    pts = np.array([[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]).T
    np.testing.assert_allclose(st.dirichlet.logpdf(pts, alpha),
                               [ss.dirichlet.logpdf(p, alpha) for p in pts.T], rtol=1e-13)
    np.testing.assert_allclose(st.dirichlet.pdf(pts[:2], alpha),
                               [ss.dirichlet.pdf(p, alpha) for p in pts.T], rtol=1e-13)
    assert st.dirichlet.logpdf(np.array([0.5, 0.6, -0.1]), alpha) == -np.inf


def test_stats_gradients():
    """Finite differences of the densities in their parameters (scipy's values)."""
    x = np.array([-1.3, 0.2, 2.5])
    g = jax.grad(lambda loc, scale: st.norm.logpdf(x, loc, scale).sum(),
                 argnums=(0, 1))(np.float64(0.3), np.float64(1.7))
    np.testing.assert_allclose(g, [_fd(lambda v: ss.norm.logpdf(x, v, 1.7).sum(), 0.3),
                                   _fd(lambda v: ss.norm.logpdf(x, 0.3, v).sum(), 1.7)], rtol=1e-7)
    pts = np.array([1.0, 2.0, 4.0])
    for fn, ref, p in ((st.t.logpdf, ss.t.logpdf, 3.5), (st.gamma.logpdf, ss.gamma.logpdf, 2.5),
                       (st.chi2.logpdf, ss.chi2.logpdf, 3.0),
                       (st.poisson.logpmf, lambda k, mu: ss.poisson.logpmf(k, mu), 2.5)):
        got = jax.grad(lambda v, fn=fn: fn(pts, v).sum())(np.float64(p))
        np.testing.assert_allclose(got, _fd(lambda v, ref=ref: ref(pts, v).sum(), p), rtol=1e-7)
    gb = jax.grad(lambda a, b: st.beta.logpdf(0.3, a, b), argnums=(0, 1))(np.float64(2),
                                                                          np.float64(3))
    np.testing.assert_allclose(gb, [_fd(lambda v: ss.beta.logpdf(0.3, v, 3.0), 2.0),
                                    _fd(lambda v: ss.beta.logpdf(0.3, 2.0, v), 3.0)], rtol=1e-7)
    gc = jax.grad(lambda v: st.gamma.cdf(v, 2.5))(np.float64(1.5))  # through igamma's rule
    np.testing.assert_allclose(gc, ss.gamma.pdf(1.5, 2.5), rtol=1e-12)
    assert float(jax.grad(st.logistic.logpdf)(0.0)) == 0.0  # logaddexp's tie
    mean, cov = np.array([0.5, -1.0]), np.array([[2.0, 0.3], [0.3, 1.0]])
    gm = jax.grad(lambda m: st.multivariate_normal.logpdf(np.array([1.0, 1.0]), m, cov))(mean)
    np.testing.assert_allclose(gm, -np.linalg.solve(cov, mean - 1.0), rtol=1e-12)
    alpha = np.array([1.5, 2.0, 3.0])
    pt = np.array([0.2, 0.3, 0.5])
    ga = jax.grad(lambda a: st.dirichlet.logpdf(pt, a))(alpha)
    np.testing.assert_allclose(ga, np.log(pt) - sp.digamma(alpha) + sp.digamma(alpha.sum()),
                               rtol=1e-12)


def test_under_jit():
    """One compiled program of element-wise special functions and densities
    equals eager evaluation; jit(grad) uses the custom derivative rules.
    (Kept small: each of these compositions costs numxla seconds of compile.)"""
    x = np.linspace(0.2, 4.0, 8).astype(np.float32)

    def many(v):
        return [S.gammaln(v), S.erfc(v), S.ndtr(v - 2), S.xlogy(v, v), S.logit(v / 5),
                st.norm.logpdf(v, 1.0, 2.0), st.t.logpdf(v, 3.0), st.gamma.logpdf(v, 2.0),
                st.logistic.logpdf(v)]

    for got, want in zip(jax.jit(many)(x), many(x)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=3e-6, atol=1e-6)
    grad_fn = jax.grad(lambda v: (S.gammaln(v) + S.erfc(v)).sum())
    np.testing.assert_allclose(np.asarray(jax.jit(grad_fn)(x)), np.asarray(grad_fn(x)), rtol=2e-6)
