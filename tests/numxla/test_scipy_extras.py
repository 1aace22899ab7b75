"""The parts of ``jax.scipy`` and ``jax.image`` added for JAX's docs
programs: new ``stats`` distributions and sample statistics, ``linalg``'s
special matrices and Schur-based functions, ``special``'s exponential
integrals, Spence, Bessel J and erfcx, and image resizing.  Checked
against SciPy (float64) or against values JAX 0.10.2 printed."""
import numpy as np
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import numxla as jax
import numxla.numpy as jnp
from numxla import image
from numxla.scipy import linalg as sla
from numxla.scipy import special, stats


PTS = np.array([-2.0, -0.5, 0.0, 0.7, 2.5])


@pytest.mark.parametrize("name, args, ours, theirs", [
    ("gumbel_r", (0.5, 2.0), stats.gumbel_r, scipy.stats.gumbel_r),
    ("gumbel_l", (0.5, 2.0), stats.gumbel_l, scipy.stats.gumbel_l),
    ("truncnorm", (-1.0, 1.5, 0.2, 1.3), stats.truncnorm, scipy.stats.truncnorm),
    ("truncnorm_tail", (3.0, 6.0), stats.truncnorm, scipy.stats.truncnorm),
])
def test_continuous_distributions_match_scipy(x64, name, args, ours, theirs):
    x = PTS + (4.0 if name == "truncnorm_tail" else 0.0)
    for fn in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        np.testing.assert_allclose(getattr(ours, fn)(x, *args), getattr(theirs, fn)(x, *args),
                                   rtol=1e-9, atol=1e-12, err_msg=f"{name}.{fn}")


def test_more_distributions_match_scipy(x64):
    np.testing.assert_allclose(stats.gennorm.logpdf(PTS, 1.5),
                               scipy.stats.gennorm.logpdf(PTS, 1.5))
    np.testing.assert_allclose(stats.gennorm.cdf(PTS, 0.8), scipy.stats.gennorm.cdf(PTS, 0.8))
    np.testing.assert_allclose(stats.vonmises.logpdf(PTS, 2.0),
                               scipy.stats.vonmises.logpdf(PTS, 2.0))
    np.testing.assert_allclose(stats.wrapcauchy.logpdf(PTS + 2.0, 0.3),
                               scipy.stats.wrapcauchy.logpdf(PTS + 2.0, 0.3))
    k = np.array([0.0, 1.0, 3.0, 5.0])
    np.testing.assert_allclose(stats.betabinom.logpmf(k, 5, 2.0, 3.0),   # betaln: ~1e-7
                               scipy.stats.betabinom.logpmf(k, 5, 2.0, 3.0), rtol=1e-5)
    assert stats.betabinom.logpmf(6.0, 5, 2.0, 3.0) == -np.inf
    p = np.array([0.2, 0.5, 0.3])
    np.testing.assert_allclose(stats.multinomial.logpmf(np.array([1.0, 2.0, 0.0]), 3, p),
                               scipy.stats.multinomial.logpmf([1, 2, 0], 3, p))
    assert stats.multinomial.logpmf(np.array([1.0, 1.0, 0.0]), 3, p) == -np.inf


def test_sample_statistics_match_scipy(x64):
    a = np.array([[3.0, 1.0, 2.0, 2.0], [1.0, 1.0, 1.0, 0.0]])
    for method in ("average", "min", "max", "dense", "ordinal"):
        np.testing.assert_array_equal(stats.rankdata(a, method),
                                      scipy.stats.rankdata(a, method))
        np.testing.assert_array_equal(stats.rankdata(a, method, axis=1),
                                      scipy.stats.rankdata(a, method, axis=1))
    mode = stats.mode(np.array([[1, 2, 2], [3, 1, 1]]), axis=1)
    assert mode.mode.tolist() == [2, 1] and mode.count.tolist() == [2, 2]
    assert stats.mode(np.array([3, 1, 3, 1])).mode == 1      # the smallest of the most frequent
    np.testing.assert_allclose(stats.sem(a, axis=1), scipy.stats.sem(a, axis=1))


def test_gaussian_kde_matches_scipy(x64):
    data = np.array([[0.0, 1.0, 2.0, 3.0, 1.0], [1.0, 0.0, 2.0, 2.0, 5.0]])
    weights = np.array([1.0, 2.0, 1.0, 1.0, 3.0])
    points = np.array([[0.0, 1.0, 2.5], [1.0, 2.0, 0.5]])
    for bw in (None, "silverman", 0.7):
        ours = stats.gaussian_kde(data, bw_method=bw, weights=weights)
        theirs = scipy.stats.gaussian_kde(data, bw_method=bw, weights=weights)
        np.testing.assert_allclose(ours.covariance, theirs.covariance)
        np.testing.assert_allclose(ours(points), theirs(points))
        np.testing.assert_allclose(ours.logpdf(points), theirs.logpdf(points))
    one = stats.gaussian_kde(PTS)
    np.testing.assert_allclose(one.integrate_box_1d(-1.0, 1.0),
                               scipy.stats.gaussian_kde(PTS).integrate_box_1d(-1.0, 1.0))
    assert jax.jit(lambda k, x: k.evaluate(x))(one, np.array([0.5])).shape == (1,)


def test_special_matrices_match_scipy(x64):
    c, r = np.array([1.0, 2.0, 3.0]), np.array([9.0, 8.0, 7.0, 6.0])
    np.testing.assert_array_equal(sla.toeplitz(c, r), scipy.linalg.toeplitz(c, r))
    np.testing.assert_array_equal(sla.hankel(c, r), scipy.linalg.hankel(c, r))
    np.testing.assert_array_equal(sla.circulant(c), scipy.linalg.circulant(c))
    np.testing.assert_allclose(sla.companion([2.0, 3.0, 4.0, 5.0]),
                               scipy.linalg.companion([2.0, 3.0, 4.0, 5.0]))
    for n in (2, 5, 6, 7):
        np.testing.assert_allclose(sla.fiedler_companion(np.arange(1.0, n + 1)),
                                   scipy.linalg.fiedler_companion(np.arange(1.0, n + 1)))
    for m, n in ((3, 5), (5, 3), (4, 4), (2, 2)):
        for mode in ("full", "same", "valid"):
            np.testing.assert_array_equal(
                sla.convolution_matrix(np.arange(1.0, m + 1), n, mode),
                scipy.linalg.convolution_matrix(np.arange(1.0, m + 1), n, mode))
    for kind in ("symmetric", "lower", "upper"):
        np.testing.assert_array_equal(sla.pascal(4, kind), scipy.linalg.pascal(4, kind))
    np.testing.assert_allclose(sla.hilbert(4), scipy.linalg.hilbert(4))
    np.testing.assert_allclose(sla.invhilbert(4), scipy.linalg.invhilbert(4))
    np.testing.assert_allclose(sla.helmert(4, full=True), scipy.linalg.helmert(4, full=True))
    np.testing.assert_array_equal(sla.hadamard(4), scipy.linalg.hadamard(4))
    np.testing.assert_allclose(sla.dft(3, "sqrtn"), scipy.linalg.dft(3, "sqrtn"))
    np.testing.assert_allclose(sla.leslie([0.1, 2.0, 1.0], [0.2, 0.8]),
                               scipy.linalg.leslie([0.1, 2.0, 1.0], [0.2, 0.8]))
    np.testing.assert_array_equal(sla.fiedler(np.array([1, 4, 12])),
                                  scipy.linalg.fiedler([1, 4, 12]))


def test_decompositions_match_scipy(x64):
    a = np.array([[1.0, 2.0, 0.0], [-1.0, 3.0, 1.0], [0.5, 0.0, 2.0]])
    s = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    u, p = sla.polar(a)
    np.testing.assert_allclose(u @ p, a, atol=1e-12)
    np.testing.assert_allclose(p, scipy.linalg.polar(a)[1], atol=1e-12)
    np.testing.assert_allclose(sla.polar(a, side="left")[1], scipy.linalg.polar(a, "left")[1],
                               atol=1e-12)
    for ours, theirs in zip(sla.expm_frechet(s / 4, a), scipy.linalg.expm_frechet(s / 4, a)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    t, z = sla.schur(a)
    np.testing.assert_allclose(z @ t @ z.T, a, atol=1e-12)
    h, q = sla.hessenberg(a, calc_q=True)
    np.testing.assert_allclose(q @ h @ q.T, a, atol=1e-12)
    np.testing.assert_allclose(sla.sqrtm(s) @ sla.sqrtm(s), s, atol=1e-10)
    x = jax.jit(sla.solve_sylvester)(s, a, np.ones((3, 3)))
    np.testing.assert_allclose(s @ x + x @ a, np.ones((3, 3)), atol=1e-12)
    np.testing.assert_allclose(sla.eigh_tridiagonal(np.array([1.0, 2.0, 3.0]),
                                                    np.array([0.5, 0.5]), eigvals_only=True),
                               scipy.linalg.eigh_tridiagonal([1.0, 2.0, 3.0], [0.5, 0.5],
                                                             eigvals_only=True))
    cq, r = sla.qr_multiply(a, np.ones((2, 3)))
    q_ref, r_ref = scipy.linalg.qr(a)
    np.testing.assert_allclose(np.abs(cq), np.abs(np.ones((2, 3)) @ q_ref), atol=1e-12)
    np.testing.assert_allclose(sla.funm(s, jnp.exp).real, scipy.linalg.expm(s), rtol=1e-10)


def test_special_functions_match_scipy(x64):
    x = np.array([1e-6, 0.01, 0.3, 0.9, 1.0, 1.1, 2.0, 5.0, 12.0, 30.0, 41.0, 60.0])
    np.testing.assert_allclose(special.exp1(x), scipy.special.exp1(x), rtol=1e-11)
    np.testing.assert_allclose(special.expi(x), scipy.special.expi(x), rtol=1e-11)
    np.testing.assert_allclose(special.expi(-x), scipy.special.expi(-x), rtol=1e-11)
    for n in (0, 1, 2, 5, 30):
        np.testing.assert_allclose(special.expn(n, x), scipy.special.expn(n, x), rtol=1e-11)
    y = np.array([1e-5, 0.1, 0.5, 0.99, 1.0, 1.5, 2.0, 2.5, 5.0, 100.0, 1e6])
    np.testing.assert_allclose(special.spence(y), scipy.special.spence(y), rtol=1e-12)
    z = np.array([0.0, 0.1, 1.0, 2.5, 7.0, 20.0, -3.0])
    jn = special.bessel_jn(z, v=4)
    for k in range(5):
        np.testing.assert_allclose(jn[k], scipy.special.jv(k, z), atol=1e-13)
    e = np.array([-5.0, -0.5, 0.0, 0.5, 1.9, 2.1, 10.0, 1e5])
    np.testing.assert_allclose(special.erfcx(e), scipy.special.erfcx(e), rtol=1e-13)
    assert np.isnan(special.exp1(-1.0)) and special.exp1(0.0) == np.inf
    g = jax.grad(special.exp1)(0.7)
    np.testing.assert_allclose(g, -np.exp(-0.7) / 0.7, rtol=1e-10)


def test_image_resize_matches_jax(x64_off):
    img = jnp.arange(12.0).reshape(3, 4)
    np.testing.assert_allclose(image.resize(img, (2, 2), "linear"),
                               [[2.2142858, 3.7857151], [7.2142873, 8.785716]], rtol=1e-6)
    np.testing.assert_allclose(image.resize(img, (6, 3), "cubic")[0],
                               [-0.16300981, 1.147059, 2.4571273], rtol=1e-5)
    assert image.resize(img, (2, 6), "nearest").tolist() == [[0, 1, 1, 2, 3, 3],
                                                             [8, 9, 9, 10, 11, 11]]
    np.testing.assert_allclose(image.resize(img, (2, 2), "lanczos3", antialias=False),
                               [[0.86449456, 3.1212187], [7.8787813, 10.135507]], rtol=1e-5)
    np.testing.assert_allclose(
        image.scale_and_translate(img, (3, 4), (0, 1), jnp.array([1.0, 2.0]),
                                  jnp.array([0.5, -1.0]), "linear"),
        [[0.25, 0.75, 1.25, 1.75], [2.25, 2.75, 3.25, 3.75], [6.25, 6.75, 7.25, 7.75]])
    assert image.resize(jnp.arange(6).reshape(2, 3), (4, 6), "bilinear").dtype == np.float32
