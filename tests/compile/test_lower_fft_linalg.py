"""Compiled Fft, Cholesky and TriangularSolve (compile/lowering/fft_linalg.py)
against their reference semantics: FFT/IFFT/RFFT/IRFFT over 1-3 trailing
dimensions with power-of-two and other (Bluestein) lengths, c64 and c128;
Cholesky of both triangles with the other triangle never read and NaN for a
matrix that is not positive definite; TriangularSolve with every flag — for
real, complex and 16-bit float types, with operands and results in
non-default layouts.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import itertools

import numpy as np

import compile.lowering.fft_linalg  # noqa: F401  (registers the lowerings)
import primitives as lax
from compile import jit
from compile.jit import Lowered
from tracer.core import AbstractValue
from tracer.shapes import Layout

rng = np.random.default_rng(5)


def crand(shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def check(got, want, where="", tol=None):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{where}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
    if tol is None:
        single = got.dtype in (np.float32, np.complex64)
        tol = 3e-3 if got.dtype == np.float16 else 2e-5 if single else 1e-12
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=where)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=where)


def check_all(got, want):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        check(g, w, f"result {i}")


def relaid(f, args, layouts):
    """``f`` compiled with its parameters and every intermediate value re-laid
    out (``layouts``, cycled, give a Layout per abstract value)."""
    lowered = jit(f).lower(*args)
    graph = lowered.graph
    values = list(graph.in_vars) + [v for eq in graph.equations for v in eq.outputs]
    choices = itertools.cycle(layouts)
    for v in values:
        if v.aval.shape.is_array and v.aval.ndim:
            v.aval = AbstractValue(v.aval.shape.with_layout(next(choices)(v.aval)),
                                   v.aval.weak_type)
    return Lowered(graph, lowered.out_shapes).compile()


LAYOUTS = [  # reversed, tiled, permuted, padded, repeated tiles
    lambda av: Layout(tuple(range(av.ndim))),
    lambda av: Layout(tuple(reversed(range(av.ndim))), tiles=((2, 2),)),
    lambda av: Layout((av.ndim - 2, av.ndim - 1) + tuple(reversed(range(av.ndim - 2)))),
    lambda av: Layout(tuple(reversed(range(av.ndim))),
                      padded_dimensions=tuple(d + 1 for d in av.dimensions)),
    lambda av: Layout(tuple(range(av.ndim)), tiles=((2, 4), (2, 1))),
]


# -- Fft --------------------------------------------------------------------------------------

def ffts(c, c64, r, r32, h, h3, c1):
    return [lax.fft(c, "IFFT", (8,)), lax.fft(c, "FFT", (6, 8)), lax.fft(c, "IFFT", (3, 6, 8)),
            lax.fft(c64, "FFT", (5, 7)), lax.fft(c64, "IFFT", (7,)),   # Bluestein lengths
            lax.fft(r, "RFFT", (4, 12)), lax.fft(r32, "RFFT", (9,)),
            lax.fft(h, "IRFFT", (11,)),                                 # odd n (even: below)
            lax.fft(h3, "IRFFT", (2, 3, 8)), lax.fft(c1, "FFT", (1,))]


def fft_args():
    return (crand((3, 6, 8)), crand((2, 5, 7), np.complex64), rng.standard_normal((3, 4, 12)),
            rng.standard_normal((2, 9)).astype(np.float32), crand((2, 4, 6)), crand((2, 3, 5)),
            crand((3, 1)))


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
    check_all(relaid(layout_ffts, args, LAYOUTS)(*args), layout_ffts(*args))


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
    check_all(relaid(f, args, LAYOUTS)(*args), f(*args))


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
    check_all(relaid(solves, args, LAYOUTS)(*args), solves(*args))


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
