"""The parts of ``jax.scipy`` added for issue 14: ``signal``'s spectral
analysis (``stft``, ``istft``, ``welch``, ``csd``, ``detrend``) and
``special``'s ``wofz``, ``dawsn``, ``fresnel``, ``sici``, ``owens_t``,
``hyp1f1``, ``hyp2f1``, ``sph_harm_y`` and ``bernoulli``: against SciPy in
float64 (edge values included), closed forms, and their derivatives; a
sample under ``jit`` (tier 0: nothing compiled) and ``vmap``."""
import functools
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.signal
import scipy.special as sp

import numxla as jax
import numxla.numpy as jnp
from numxla.scipy import signal as S
from numxla.scipy import special as ns
from numxla.tracer.config import config


@pytest.fixture(autouse=True)
def x64(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", True)
    monkeypatch.setenv("NUMXLA_TIERED", "reference")


RNG = np.random.default_rng(14)
SIGNAL = RNG.standard_normal((2, 300))
OTHER = RNG.standard_normal((2, 300))


def close(ours, theirs, rtol=1e-10, atol=1e-12):
    ours = ours if isinstance(ours, tuple) else (ours,)
    theirs = theirs if isinstance(theirs, tuple) else (theirs,)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert np.shape(o) == np.shape(t)
        np.testing.assert_allclose(np.asarray(o), t, rtol=rtol, atol=atol)


# --------------------------------------------------------------------------
# signal
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    dict(nperseg=64),
    dict(fs=10.0, nperseg=50, noverlap=20, nfft=64, detrend="linear"),
    dict(nperseg=33, boundary="even"), dict(nperseg=33, boundary="odd"),
    dict(nperseg=33, boundary="constant"), dict(nperseg=33, boundary=None, padded=False),
    dict(nperseg=64, return_onesided=False), dict(window=("tukey", 0.3), nperseg=64),
    dict(window=np.hamming(40), nperseg=40), dict(nperseg=64, axis=0),
])
def test_stft_matches_scipy(kwargs):
    x = SIGNAL.T if kwargs.get("axis") == 0 else SIGNAL
    close(S.stft(x, **kwargs), scipy.signal.stft(x, **kwargs))


def test_istft_matches_scipy_and_inverts_stft():
    _, _, z = scipy.signal.stft(SIGNAL, nperseg=64)
    close(S.istft(z, nperseg=64), scipy.signal.istft(z, nperseg=64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # SciPy: "NOLA condition failed"
        close(S.istft(z, boundary=False), scipy.signal.istft(z, boundary=False))
    moved = np.moveaxis(z, -1, 0)
    close(S.istft(moved, time_axis=0, freq_axis=-1),
          scipy.signal.istft(moved, time_axis=0, freq_axis=-1))
    _, _, z2 = scipy.signal.stft(SIGNAL, nperseg=50, noverlap=30)
    close(S.istft(z2, nperseg=50, noverlap=30), scipy.signal.istft(z2, nperseg=50, noverlap=30))
    _, _, zc = scipy.signal.stft(SIGNAL + 1j * OTHER, nperseg=64, return_onesided=False)
    close(S.istft(zc, input_onesided=False), scipy.signal.istft(zc, input_onesided=False))
    _, back = S.istft(S.stft(SIGNAL, nperseg=64)[2], nperseg=64)
    np.testing.assert_allclose(np.asarray(back)[:, :300], SIGNAL, atol=1e-12)


@pytest.mark.parametrize("kwargs", [
    dict(), dict(fs=100.0, nperseg=64, noverlap=16, nfft=100, scaling="spectrum",
                 detrend="linear"),
    dict(nperseg=64, average="median"), dict(nperseg=63, average="median", detrend=False),
    dict(nperseg=64, axis=0), dict(nperseg=300),
])
def test_welch_and_csd_match_scipy(kwargs):
    x, y = (SIGNAL.T, OTHER.T) if kwargs.get("axis") == 0 else (SIGNAL, OTHER)
    close(S.welch(x, **kwargs), scipy.signal.welch(x, **kwargs))
    close(S.csd(x, y, **kwargs), scipy.signal.csd(x, y, **kwargs))


def test_csd_shapes_complex_input_and_detrend():
    close(S.csd(SIGNAL, OTHER[:, :200], nperseg=64),
          scipy.signal.csd(SIGNAL, OTHER[:, :200], nperseg=64))
    close(S.csd(SIGNAL, OTHER[:1], nperseg=64), scipy.signal.csd(SIGNAL, OTHER[:1], nperseg=64))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # complex input: two-sided, as SciPy warns
        z = SIGNAL + 1j * OTHER
        close(S.welch(z, nperseg=64), scipy.signal.welch(z, nperseg=64))
        close(S.welch(SIGNAL[:, :100]), scipy.signal.welch(SIGNAL[:, :100]))  # nperseg cut
    close(S.detrend(SIGNAL), scipy.signal.detrend(SIGNAL))
    close(S.detrend(SIGNAL, type="constant"), scipy.signal.detrend(SIGNAL, type="constant"))
    close(S.detrend(SIGNAL, bp=[50, 170]), scipy.signal.detrend(SIGNAL, bp=[50, 170]))
    close(S.detrend(SIGNAL.T, axis=0, bp=7), scipy.signal.detrend(SIGNAL.T, axis=0, bp=7))
    close(S.get_window("hann", 16), scipy.signal.get_window("hann", 16))
    with pytest.raises(ValueError, match="noverlap"):
        S.stft(SIGNAL, nperseg=16, noverlap=16)
    with pytest.raises(ValueError, match="nfft"):
        S.welch(SIGNAL, nperseg=64, nfft=32)


def test_spectral_under_transforms():
    f, pxx = jax.jit(functools.partial(S.welch, nperseg=64))(SIGNAL)
    close((f, pxx), scipy.signal.welch(SIGNAL, nperseg=64))
    close(jax.vmap(lambda x: S.welch(x, nperseg=64)[1])(SIGNAL),
          scipy.signal.welch(SIGNAL, nperseg=64)[1])
    # the gradient of sum |STFT|^2 (a composition of ops) against finite differences
    x = SIGNAL[0, :64]
    energy = lambda v: jnp.sum(jnp.abs(S.stft(v, nperseg=16)[2]) ** 2)  # noqa: E731
    g = np.asarray(jax.grad(energy)(x))
    e = np.zeros(64)
    e[5] = 1e-6
    np.testing.assert_allclose(g[5], (energy(x + e) - energy(x - e)) / 2e-6, rtol=1e-6)


def test_spectral_float32(monkeypatch):
    monkeypatch.setattr(config, "jax_enable_x64", False)
    x = SIGNAL.astype(np.float32)
    f, pxx = S.welch(x, nperseg=64)
    assert (f.dtype, pxx.dtype) == (np.float32, np.float32)
    close(pxx, scipy.signal.welch(SIGNAL, nperseg=64)[1], rtol=1e-4, atol=1e-6)
    assert S.stft(x, nperseg=64)[2].dtype == np.complex64


# --------------------------------------------------------------------------
# special: the error function's relatives, sici, bernoulli
# --------------------------------------------------------------------------

LINE = np.r_[np.linspace(-30, 30, 241), [0.0, -0.0, 1e-10, -3e-8, 1e3, 1e6, 1e200, np.inf,
                                         -np.inf, np.nan]]


def test_dawsn_fresnel_sici_match_scipy():
    close(ns.dawsn(LINE), sp.dawsn(LINE), rtol=3e-14, atol=0)
    finite = LINE[np.abs(LINE) != 1e200]        # SciPy: NaN there, JAX (and numxla): 1/2
    close(ns.fresnel(finite), sp.fresnel(finite), rtol=3e-14, atol=0)
    close(ns.fresnel(1e200), (0.5, 0.5))
    si, ci = ns.sici(LINE)
    ref_si, ref_ci = sp.sici(LINE)
    close(si, ref_si, rtol=3e-14, atol=0)
    close(ci, ref_ci, rtol=1e-13, atol=1e-16)   # relative error grows near Ci's zeros


def test_wofz_matches_scipy():
    re, im = np.meshgrid(np.linspace(-10, 10, 41), np.linspace(-6, 10, 33))
    z = (re + 1j * im).ravel()
    z = np.r_[z, [1e9 + 1e9j, 1e10j, 0j, complex(np.nan, 0)]]
    close(ns.wofz(z), sp.wofz(z), rtol=3e-14, atol=0)
    assert ns.wofz(np.float32(1.0)).dtype == np.complex64
    close(ns.wofz(np.array([-2.0, 0.5])), sp.wofz(np.array([-2.0, 0.5])), rtol=3e-14)


def test_owens_t_matches_scipy():
    h = np.r_[RNG.uniform(-10, 10, 200), [0, np.inf, 1, 1, np.nan, 10, 40, -3, 0]]
    a = np.r_[RNG.uniform(-1.5, 1.5, 100), RNG.uniform(-40, 40, 100),
              [np.inf, 1, 0, -np.inf, 1, 0.5, 3, 1e300, 0.3]]
    close(ns.owens_t(h, a), sp.owens_t(h, a), rtol=2e-13, atol=1e-300)


def test_bernoulli_is_exact():
    exact = [Fraction(1), Fraction(-1, 2), Fraction(1, 6), 0, Fraction(-1, 30), 0, Fraction(1, 42)]
    np.testing.assert_array_equal(ns.bernoulli(6), [float(b) for b in exact])
    close(ns.bernoulli(40), sp.bernoulli(40), rtol=1e-10)
    assert ns.bernoulli(0).shape == (1,)
    assert ns.bernoulli(300)[-3] == np.inf and ns.bernoulli(300)[-1] == -np.inf  # overflow
    with pytest.raises(ValueError):
        ns.bernoulli(-1)


def test_error_function_relatives_derivatives():
    x = np.array([-3.0, -0.4, 0.0, 0.7, 2.5, 12.0])
    close(jax.vmap(jax.grad(ns.dawsn))(x), 1 - 2 * x * sp.dawsn(x), rtol=1e-13)
    s_grad = jax.vmap(jax.grad(lambda v: ns.fresnel(v)[0]))(x)
    c_grad = jax.vmap(jax.grad(lambda v: ns.fresnel(v)[1]))(x)
    close((s_grad, c_grad), (np.sin(np.pi * x * x / 2), np.cos(np.pi * x * x / 2)), rtol=1e-12)
    nz = x[x != 0]
    close(jax.vmap(jax.grad(lambda v: ns.sici(v)[0]))(x), np.sinc(x / np.pi), rtol=1e-13)
    close(jax.vmap(jax.grad(lambda v: ns.sici(v)[1]))(nz), np.cos(nz) / nz, rtol=1e-13)
    z, t = 0.7 + 0.4j, 0.3 - 0.2j                      # w'(z) = -2 z w(z) + 2i / sqrt(pi)
    _, tangent = jax.jvp(ns.wofz, (z,), (t,))
    close(tangent, (-2 * z * sp.wofz(z) + 2j / np.sqrt(np.pi)) * t, rtol=1e-13)
    for h, a in [(0.5, 0.7), (-1.2, 3.0), (2.0, -0.3)]:
        gh, ga = jax.grad(ns.owens_t, argnums=(0, 1))(h, a)
        eps = 1e-6
        close((gh, ga), ((sp.owens_t(h + eps, a) - sp.owens_t(h - eps, a)) / (2 * eps),
                         (sp.owens_t(h, a + eps) - sp.owens_t(h, a - eps)) / (2 * eps)),
              rtol=1e-7, atol=1e-12)


def test_fixed_edges_of_older_functions():
    assert np.isnan(ns.expi(np.nan)) and np.isnan(ns.spence(np.inf))


# --------------------------------------------------------------------------
# special: hypergeometric functions, spherical harmonics
# --------------------------------------------------------------------------

def test_hyp2f1_closed_forms():
    x = np.array([-50.0, -3.0, -1.0, -0.4, 0.0, 0.3, 0.5, 0.7, 0.95, 0.999])
    # 2F1(1, 1; 2; x) = -log(1 - x) / x: c - a - b = 0, the logarithmic case everywhere
    close(ns.hyp2f1(1.0, 1.0, 2.0, x), np.where(x == 0, 1.0, -np.log1p(-x) / np.where(
        x == 0, 1, x)), rtol=1e-13)
    close(ns.hyp2f1(0.7, 2.5, 2.5, x), (1 - x) ** -0.7, rtol=1e-13)
    r = np.sqrt(np.abs(x))                          # 2F1(1/2, 1; 3/2; -r^2) = atan(r) / r
    close(ns.hyp2f1(0.5, 1.0, 1.5, -r * r), np.where(r == 0, 1.0, np.arctan(r) / np.where(
        r == 0, 1, r)), rtol=1e-13)
    y = np.sqrt(x[x >= 0])                          # 2F1(1/2, 1/2; 3/2; y^2) = asin(y) / y
    close(ns.hyp2f1(0.5, 0.5, 1.5, y * y), np.where(y == 0, 1.0, np.arcsin(y) / np.where(
        y == 0, 1, y)), rtol=1e-12)


def test_hyp2f1_matches_scipy():
    n = 60
    a, b = RNG.uniform(-4, 4, n), RNG.uniform(-4, 4, n)
    c, x = RNG.uniform(-4, 6, n), RNG.uniform(-6, 0.99, n)
    m = RNG.integers(-5, 6, n)                      # c - a - b an integer
    a2, b2 = RNG.uniform(-3, 3, n), RNG.uniform(-3, 3, n)
    a3 = RNG.uniform(-3, 3, n)                      # a - b an integer, x < -1
    b3, c3, x3 = a3 + RNG.integers(-4, 5, n), RNG.uniform(0.5, 5, n), RNG.uniform(-20, -1, n)
    args = [np.r_[u, v, w] for u, v, w in
            [(a, a2, a3), (b, b2, b3), (c, a2 + b2 + m, c3), (x, x, x3)]]
    ref = sp.hyp2f1(*args)
    ok = np.isfinite(ref) & (np.abs(ref) > 0)       # SciPy gives 0 or NaN for a few of these
    close(ns.hyp2f1(*(v[ok] for v in args)), ref[ok], rtol=5e-9)
    # poles, polynomials, the edges of the domain
    edge = ns.hyp2f1(np.array([1.0, -2.0, -3.0, 1.5, 1.5, 1.5, 1.5, -2.0]),
                     np.array([1.0, 1.0, 1.0, 2.5, 2.5, 2.5, 2.5, 3.0]),
                     np.array([-2.0, -3.0, -2.0, 5.2, 3.2, 3.2, 3.2, 1.5]),
                     np.array([0.3, 0.3, 0.3, 1.0, 1.0, 1.5, np.nan, 7.0]))
    close(edge, [np.inf, 1.23, np.inf, sp.hyp2f1(1.5, 2.5, 5.2, 1.0), np.inf, np.nan, np.nan,
                 sp.hyp2f1(-2.0, 3.0, 1.5, 7.0)], rtol=1e-13)


def test_hyp1f1_matches_scipy_and_closed_forms():
    n = 100
    a, b, x = RNG.uniform(-10, 10, n), RNG.uniform(-10, 10, n), RNG.uniform(-300, 300, n)
    a2, b2, x2 = RNG.uniform(0, 5, n), RNG.uniform(0.1, 5, n), RNG.uniform(-700, 700, n)
    args = [np.r_[u, v] for u, v in [(a, a2), (b, b2), (x, x2)]]
    close(ns.hyp1f1(*args), sp.hyp1f1(*args), rtol=2e-9, atol=0)
    x = np.array([-100.0, -5.0, 0.0, 0.3, 20.0, 200.0])
    close(ns.hyp1f1(2.5, 2.5, x), np.exp(x), rtol=1e-13)
    close(ns.hyp1f1(1.0, 2.0, x), np.where(x == 0, 1.0, np.expm1(x) / np.where(x == 0, 1, x)),
          rtol=1e-13)
    edge = ns.hyp1f1(np.array([1.0, -1.0, 0.0, 1.5, 1.5, -3.0, 1.5]),
                     np.array([-2.0, -2.0, 0.0, 2.5, 2.5, 2.0, 2.5]),
                     np.array([0.5, 0.5, 0.5, np.nan, 1000.0, 1e5, -np.inf]))
    # a = b = 0 gives 1: JAX's convention (SciPy's inf)
    close(edge, [np.inf, 1.25, 1.0, np.nan, np.inf, sp.hyp1f1(-3, 2, 1e5), 0.0], rtol=1e-13)


def test_hypergeometric_derivatives():
    # d/dx 2F1(a, b; c; x) = a b / c 2F1(a+1, b+1; c+1; x), in every region
    x = np.array([-3.0, -0.5, 0.2, 0.8])
    for a, b, c in [(0.3, 1.7, 2.2), (1.0, 1.0, 2.0)]:
        g = jax.vmap(jax.grad(ns.hyp2f1, argnums=3), in_axes=(None, None, None, 0))(a, b, c, x)
        close(g, a * b / c * sp.hyp2f1(a + 1, b + 1, c + 1, x), rtol=1e-10)
    x = np.array([-200.0, -5.0, 0.0, 3.0, 170.0])
    g = jax.vmap(jax.grad(ns.hyp1f1, argnums=2), in_axes=(None, None, 0))(1.5, 2.5, x)
    close(g, 1.5 / 2.5 * sp.hyp1f1(2.5, 3.5, x), rtol=1e-10)
    ga = jax.grad(ns.hyp1f1)(1.5, 2.5, 3.0)
    eps = 1e-6
    close(ga, (sp.hyp1f1(1.5 + eps, 2.5, 3.0) - sp.hyp1f1(1.5 - eps, 2.5, 3.0)) / (2 * eps),
          rtol=1e-7)


def test_sph_harm_y_matches_scipy():
    n = RNG.integers(0, 10, 80)
    m = RNG.integers(-10, 11, 80)
    theta, phi = RNG.uniform(-1, 4, 80), RNG.uniform(-3, 7, 80)
    close(ns.sph_harm_y(n, m, theta, phi), sp.sph_harm_y(n, m, theta, phi), rtol=1e-12,
          atol=1e-15)
    n, m = np.full(20, 40), RNG.integers(-40, 41, 20)   # high degree: the stable recurrence
    close(ns.sph_harm_y(n, m, theta[:20], 0.3), sp.sph_harm_y(n, m, theta[:20], 0.3),
          atol=1e-13)
    close(ns.sph_harm_y(2, 1, 0.3, 0.5), sp.sph_harm_y(2, 1, 0.3, 0.5), rtol=1e-13)
    fixed = jax.jit(functools.partial(ns.sph_harm_y, n_max=4))
    close(fixed(np.array([2, 3]), np.array([1, -2]), np.array([0.3, 1.0]), np.array([0.5, 2.0])),
          sp.sph_harm_y(np.array([2, 3]), np.array([1, -2]), np.array([0.3, 1.0]),
                        np.array([0.5, 2.0])), rtol=1e-13)
    g = jax.grad(lambda t: jnp.real(ns.sph_harm_y(3, 1, t, 0.4)))(0.8)
    close(g, (sp.sph_harm_y(3, 1, 0.8 + 1e-6, 0.4).real
              - sp.sph_harm_y(3, 1, 0.8 - 1e-6, 0.4).real) / 2e-6, rtol=1e-7)
    with pytest.raises(NotImplementedError):
        ns.sph_harm_y(2, 1, 0.3, 0.5, diff_n=1)
    with pytest.raises(TypeError, match="integer"):
        ns.sph_harm_y(2.0, 1, 0.3, 0.5)
    with pytest.raises(TypeError, match="n_max"):
        jax.jit(ns.sph_harm_y)(np.array([2]), np.array([1]), 0.3, 0.5)


def test_new_special_functions_under_jit_and_vmap():
    x = np.array([-2.0, 0.3, 0.8])
    for fn, args in [(ns.hyp2f1, (0.5, 1.5, 2.25, x)), (ns.hyp1f1, (0.5, 1.5, x * 80)),
                     (ns.owens_t, (x, 0.7)), (ns.dawsn, (x,)), (ns.wofz, (x + 0.5j,))]:
        close(jax.jit(fn)(*args), fn(*args), rtol=1e-14)
    close(jax.jit(ns.fresnel)(x), ns.fresnel(x), rtol=1e-14)
    close(jax.jit(ns.sici)(x), ns.sici(x), rtol=1e-14)
    close(jax.vmap(ns.owens_t)(x, -x), sp.owens_t(x, -x), rtol=1e-13)
    close(jax.vmap(ns.hyp2f1, in_axes=(0, None, None, 0))(x, 1.5, 2.25, x),
          sp.hyp2f1(x, 1.5, 2.25, x), rtol=1e-12)
    assert math.isclose(float(jax.jit(ns.bernoulli, static_argnums=0)(2)[2]), 1 / 6)
