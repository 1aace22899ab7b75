"""Special functions composed from the op set, against SciPy."""
import numpy as np
from scipy.special import erfinv

import numxla.primitives as lax
from numxla.compile import jit


def test_erf_inv_f32_as_giles_approximation_and_edges():
    """XLA's f32 formula (Giles 2010): relative error below 4e-6 except where
    rounding x*x to f32 costs more, within 2e-3 of +-1."""
    x = np.concatenate([np.linspace(-1, 1, 40001, dtype=np.float32),
                        np.float32([0.999999, -0.9999999, 1e-30, 0.0, 1.5, np.nan])])
    expected = erfinv(x.astype(np.float64))
    for got in (lax.erf_inv(x), np.asarray(jit(lax.erf_inv)(x))):
        assert got.dtype == np.float32
        inner = np.abs(x) < 1 - 2e-3
        np.testing.assert_allclose(got[inner], expected[inner], rtol=4e-6, atol=1e-37)
        near_one = (np.abs(x) >= 1 - 2e-3) & (np.abs(x) < 1)
        np.testing.assert_allclose(got[near_one], expected[near_one], rtol=2e-4)
        edges = ~np.isfinite(expected)
        np.testing.assert_array_equal(got[edges], expected[edges])  # +-inf at +-1, NaN


def test_erf_inv_f64_and_half_types():
    x = np.concatenate([np.linspace(-1 + 2 ** -22, 1 - 2 ** -22, 4001), [1e-300, -0.5]])
    np.testing.assert_allclose(lax.erf_inv(x), erfinv(x), rtol=1e-14, atol=1e-300)
    # the tails, beyond f32's reach: 1 - |x| down to 2^-53 (erf(y) - x would cancel)
    tails = 1 - np.logspace(-7, np.log10(2.0 ** -53), 60)
    tails = np.concatenate([tails, -tails, [1.0, -1.0, 1.5, np.nan]])
    got, want = np.asarray(lax.erf_inv(tails)), erfinv(tails)
    np.testing.assert_allclose(got, want, rtol=1e-14)
    got = np.asarray(jit(lax.erf_inv)(tails))
    np.testing.assert_allclose(got, want, rtol=1e-14)
    h = np.linspace(-0.99, 0.99, 199).astype(np.float16)
    np.testing.assert_allclose(lax.erf_inv(h).astype(np.float64), erfinv(h.astype(np.float64)),
                               rtol=2e-3)
