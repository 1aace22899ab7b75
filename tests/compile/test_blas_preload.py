"""compile.blas_preload registers SciPy's Cython BLAS table without importing
scipy.linalg, and scipy.linalg imported afterwards still works as usual (its
``cython_blas`` attribute is the preloaded module).  Run in a fresh process:
the point is what a new process imports."""
from __future__ import annotations

import subprocess
import sys

PROBE = r"""
import sys
from numxla.compile import blas_preload
blas_preload.preload(blas_preload.BLAS)
assert blas_preload.BLAS in sys.modules
assert "scipy.linalg" not in sys.modules, "preload imported the whole package"
preloaded = sys.modules[blas_preload.BLAS]
import numpy as np
import scipy.linalg
assert scipy.linalg.cython_blas is preloaded
from scipy.linalg import cython_blas
assert cython_blas is preloaded
a = np.array([[4.0, 2.0], [2.0, 3.0]])
np.testing.assert_allclose(scipy.linalg.cholesky(a, lower=True) @ scipy.linalg.cholesky(a, lower=True).T, a)
print("ok")
"""


def test_preloaded_blas_and_a_later_scipy_linalg_import_coexist():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
