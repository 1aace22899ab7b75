"""The vectorisable transcendental functions: accuracy in ulp against NumPy
(f64 reference rounded once for f32) and NumPy's special values."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from compile.kernels import vecmath


def _vectorised(fn):
    @njit(error_model="numpy")
    def apply(x, out):
        for i in range(x.size):
            out[i] = fn(x[i])
    return apply


def ulp_error(got: np.ndarray, ref: np.ndarray) -> float:
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    with np.errstate(all="ignore"):
        err = np.abs(got.astype(np.float64) - ref.astype(np.float64)) / np.spacing(np.abs(ref))
    return float(np.where(same, 0.0, err).max())


rng = np.random.default_rng(7)
SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-300, 5e-324]

CASES = [
    # name, f64 fn, f32 fn, reference, inputs, f32 ulp bound, f64 ulp bound
    ("exp", vecmath.exp_f64, vecmath.exp_f32, np.exp,
     np.concatenate([rng.uniform(-750, 720, 200_000), rng.uniform(-2, 2, 50_000),
                     [709.78, -745.13, -708.4, 88.72, 88.73, -103.9, -87.5]]), 4, 2),
    ("log", vecmath.log_f64, vecmath.log_f32, np.log,
     np.concatenate([np.exp(rng.uniform(-745, 709, 200_000)), rng.uniform(0.5, 2, 50_000),
                     [-1.0, 2.2250738585072014e-308, 1e-45, 3e38]]), 4, 2),
]


@pytest.mark.parametrize("name,f64,f32,ref,x,ulp32,ulp64", CASES, ids=[c[0] for c in CASES])
def test_accuracy_and_special_values(name, f64, f32, ref, x, ulp32, ulp64):
    x = np.concatenate([x, SPECIAL])
    out = np.empty_like(x)
    _vectorised(f64)(x, out)
    with np.errstate(all="ignore"):
        expected = ref(x)
    assert ulp_error(out, expected) <= ulp64
    xf = x.astype(np.float32)
    outf = np.empty_like(xf)
    _vectorised(f32)(xf, outf)
    with np.errstate(all="ignore"):
        expected32 = ref(xf.astype(np.float64)).astype(np.float32)
    assert ulp_error(outf, expected32) <= ulp32
    # signs of zeros and infinities exactly as NumPy (a NaN's sign bit is not specified)
    got, want = outf[-len(SPECIAL):], expected32[-len(SPECIAL):]
    assert np.array_equal(np.isnan(got), np.isnan(want))
    signed = ~np.isnan(want)
    assert np.array_equal(np.signbit(got[signed]), np.signbit(want[signed]))
