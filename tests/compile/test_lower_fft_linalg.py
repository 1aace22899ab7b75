"""Compiled Fft, Cholesky and TriangularSolve (compile/lowering/fft_linalg.py)
against their reference semantics: FFT/IFFT/RFFT/IRFFT over 1-3 trailing
dimensions with power-of-two and other (Bluestein) lengths, c64 and c128;
Cholesky of both triangles with the other triangle never read and NaN for a
matrix that is not positive definite; TriangularSolve with every flag — for
real, complex and 16-bit float types, with operands and results in
non-default layouts.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import functools

import numpy as np

import numxla.compile.lowering.fft_linalg  # noqa: F401  (registers the lowerings)
import numxla.primitives as lax
from numxla.compile import jit

from . import util
from .util import column_major, padded, permuted, relaid, repeated_tiles, tiled

rng = np.random.default_rng(5)
rand = functools.partial(util.rand, rng=rng)
TOLS = {"f16": 3e-3, "f32": 2e-5, "f64": 1e-12}  # complexes by their parts
check_all = functools.partial(util.check_all, tols=TOLS)
LAYOUTS = [column_major, tiled, permuted, padded(1), repeated_tiles]  # for relaid


# -- Fft --------------------------------------------------------------------------------------

def ffts(c, c64, r, r32, h, h3, c1):
    return [lax.fft(c, "IFFT", (8,)), lax.fft(c, "FFT", (6, 8)), lax.fft(c, "IFFT", (3, 6, 8)),
            lax.fft(c64, "FFT", (5, 7)), lax.fft(c64, "IFFT", (7,)),   # Bluestein lengths
            lax.fft(r, "RFFT", (4, 12)), lax.fft(r32, "RFFT", (9,)),
            lax.fft(h, "IRFFT", (11,)),                                 # odd n (even: below)
            lax.fft(h3, "IRFFT", (2, 3, 8)), lax.fft(c1, "FFT", (1,))]


def fft_args():
    c128 = np.complex128
    return (rand((3, 6, 8), c128), rand((2, 5, 7), np.complex64), rng.standard_normal((3, 4, 12)),
            rng.standard_normal((2, 9)).astype(np.float32), rand((2, 4, 6), c128),
            rand((2, 3, 5), c128), rand((3, 1), c128))


def test_fft_types_lengths_and_axes():
    args = fft_args()
    check_all(jit(ffts)(*args), ffts(*args))


def layout_ffts(c, c64, r, h):
    return [lax.fft(c, "FFT", (6, 8)), lax.fft(c64, "IFFT", (5, 7)),
            lax.fft(r, "RFFT", (4, 12)), lax.fft(h, "IRFFT", (4, 10)),
            lax.fft(lax.fft(c, "FFT", (8,)), "IFFT", (8,))]


def test_fft_layouts():
    c, c64, r, _, h, _, _ = fft_args()
    args = (c, c64, r, h)
    check_all(relaid(layout_ffts, args, layouts=LAYOUTS)(*args), layout_ffts(*args))


def test_fft_empty():
    def f(x, r, h):
        return [lax.fft(x, "FFT", (0,)), lax.fft(r, "RFFT", (4,)), lax.fft(h, "IRFFT", (6,))]
    args = (np.zeros((2, 0), np.complex64), np.zeros((0, 4)), np.zeros((0, 4), np.complex128))
    check_all(jit(f)(*args), f(*args))


# -- Cholesky -----------------------------------------------------------------------------------

def spd(n, batch=(), dtype=np.float64):
    a = rng.standard_normal(batch + (n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(batch + (n, n))
    m = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    return m.astype(dtype)


def with_garbage(m, lower):
    """``m`` with NaN in the triangle the op must not read."""
    m = m.copy()
    n = m.shape[-1]
    hidden = np.triu_indices(n, 1) if lower else np.tril_indices(n, -1)
    m[(...,) + hidden] = np.nan
    return m


def choleskys(a, b, c, d, e, h):
    return [lax.cholesky(a), lax.cholesky(b, lower=False), lax.cholesky(c),
            lax.cholesky(c, lower=False), lax.cholesky(d), lax.cholesky(e), lax.cholesky(h)]


def cholesky_args():
    bad = spd(3, (2,))
    bad[1, 2, 2] = -50.0  # not positive definite: that matrix comes back all NaN
    return (with_garbage(spd(4, (2, 3)), True), with_garbage(spd(5, (), np.float32), False),
            spd(3, (2,), np.complex64), with_garbage(bad, True),
            spd(4, (), np.complex128), spd(3, (), np.float16))


def test_cholesky():
    args = cholesky_args()
    check_all(jit(choleskys)(*args), choleskys(*args))


def test_cholesky_layouts():
    args = cholesky_args()[:3]

    def f(a, b, c):
        return [lax.cholesky(a), lax.cholesky(b, lower=False), lax.cholesky(c)]
    check_all(relaid(f, args, layouts=LAYOUTS)(*args), f(*args))


# -- TriangularSolve ----------------------------------------------------------------------------

def triangular(n, batch, dtype, lower):
    a = rng.standard_normal(batch + (n, n))
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(batch + (n, n))
    a = a + 2 * n * np.eye(n)  # well conditioned
    return with_garbage(a, lower).astype(dtype)


FLAGS = [dict(left_side=left, lower=lower, unit_diagonal=unit, transpose_a=t)
         for left in (True, False) for lower in (True, False) for unit, t in
         ((False, "NO_TRANSPOSE"), (True, "TRANSPOSE"), (False, "ADJOINT"))]


def solve_args(dtype):
    out = []
    for flags in FLAGS:
        a = triangular(4, (2,), dtype, flags["lower"])
        shape = (2, 4, 3) if flags["left_side"] else (2, 3, 4)
        b = rng.standard_normal(shape).astype(dtype)
        out += [a, b]
    return out


def solves(*args):
    return [lax.triangular_solve(a, b, **flags)
            for flags, a, b in zip(FLAGS, args[0::2], args[1::2])]


def test_triangular_solve_flags_and_layouts():
    args = solve_args(np.float64)
    check_all(relaid(solves, args, layouts=LAYOUTS)(*args), solves(*args))


def test_triangular_solve_types():
    c = solve_args(np.complex64)

    def f(a, b, ac, bc, h, hb, a32, b32):
        return [lax.triangular_solve(ac, bc, left_side=True, lower=True, conjugate_a=True),
                lax.triangular_solve(ac, bc, left_side=True, lower=True, transpose_a="ADJOINT"),
                lax.triangular_solve(h, hb, left_side=False, lower=False),
                lax.triangular_solve(a32, b32, left_side=True, lower=True,
                                     transpose_a=True),
                lax.triangular_solve(a, b, left_side=False, lower=True, unit_diagonal=True)]
    h = triangular(3, (), np.float16, False)
    hb = rng.standard_normal((2, 3)).astype(np.float16)
    a32 = triangular(5, (2, 2), np.float32, True)
    b32 = rng.standard_normal((2, 2, 5, 3)).astype(np.float32)
    args = (triangular(4, (2,), np.float64, True), rng.standard_normal((2, 3, 4)), c[0], c[1],
            h, hb, a32, b32)
    check_all(jit(f)(*args), f(*args))
