"""The ``jax.numpy`` functions of ``primitives.numpy`` against NumPy.

Each function is compared with NumPy's on representative inputs (several
shapes, axes and element types), eagerly; samples of them run under ``jit``
(grouped into a few programs: each costs a compile) and under ``vmap`` and
``grad``.  Where JAX and NumPy differ, JAX's behaviour is the reference and
the test says so (float histogram counts, -1 from ``nanargmax`` of an
all-NaN slice, unique-sized outputs given ``size=`` under tracing...).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import numxla.primitives.numpy as xnp
from numxla.autodiff import check_grads, grad, vmap
from numxla.compile import jit
from numxla.tracer import pytree
from numxla.tracer.config import config
from numxla.tracer.core import ConcretizationError, default_float, default_int

RNG = np.random.default_rng(20261125)
TOL = {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-11,
       np.dtype(np.complex64): 2e-5, np.dtype(np.complex128): 1e-11}


def check(got, want, *, dtype=True, tol=None, err=""):
    """``got`` equals ``want`` (pytrees of arrays): shapes, values (within the
    element type's tolerance) and, if ``dtype``, element types."""
    if isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), err
        for g, w in zip(got, want):
            check(g, w, dtype=dtype, tol=tol, err=err)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.shape == w.shape, f"{err}: shape {g.shape} != {w.shape}"
    if dtype:
        assert g.dtype == w.dtype, f"{err}: dtype {g.dtype} != {w.dtype}"
    if g.dtype.kind in "fc" or w.dtype.kind in "fc":
        t = TOL.get(g.dtype, 1e-11) if tol is None else tol
        np.testing.assert_allclose(g, w, rtol=t, atol=t, equal_nan=True, err_msg=err)
    else:
        np.testing.assert_array_equal(g, w, err_msg=err)


def normal(shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def uniform(shape, lo, hi, dtype=np.float32):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def ints(shape, lo=-8, hi=9, dtype=np.int32):
    return RNG.integers(lo, hi, shape).astype(dtype)


SHAPES = [(), (5,), (2, 3, 4)]
FLOATS = [np.float32, np.float64]


# -- element-wise functions --------------------------------------------------------------------

# name -> (input sampler (shape, dtype), NumPy reference or None for np.<name>)
UNARY = {
    "arccos": (lambda s, t: uniform(s, -1, 1, t), None),
    "arcsin": (lambda s, t: uniform(s, -1, 1, t), None),
    "arctan": (lambda s, t: normal(s, t) * 3, None),
    "arccosh": (lambda s, t: uniform(s, 1, 20, t), None),
    "arcsinh": (lambda s, t: normal(s, t) * 10, None),
    "arctanh": (lambda s, t: uniform(s, -0.99, 0.99, t), None),
    "acos": (lambda s, t: uniform(s, -1, 1, t), np.arccos),
    "asinh": (lambda s, t: normal(s, t), np.arcsinh),
    "deg2rad": (lambda s, t: normal(s, t) * 90, None),
    "rad2deg": (lambda s, t: normal(s, t), None),
    "radians": (lambda s, t: normal(s, t) * 90, None),
    "degrees": (lambda s, t: normal(s, t), None),
    "exp2": (lambda s, t: normal(s, t) * 4, None),
    "log2": (lambda s, t: uniform(s, 0.01, 100, t), None),
    "log10": (lambda s, t: uniform(s, 0.01, 100, t), None),
    "fabs": (lambda s, t: normal(s, t), None),
    "sinc": (lambda s, t: normal(s, t) * 3, None),
    "i0": (lambda s, t: normal(s, t) * 12, None),
    "signbit": (lambda s, t: normal(s, t), None),
    "spacing": (lambda s, t: normal(s, t) * 100, None),
    "positive": (lambda s, t: normal(s, t), None),
    "isposinf": (lambda s, t: np.array([np.inf, -np.inf, 1.0, np.nan], t)[
        np.arange(int(np.prod(s))) % 4].reshape(s), None),
    "isneginf": (lambda s, t: np.array([np.inf, -np.inf, 1.0, np.nan], t)[
        np.arange(int(np.prod(s))) % 4].reshape(s), None),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_functions_match_numpy(name, shape, dtype):
    sample, ref = UNARY[name]
    x = sample(shape, dtype)
    want = (ref or getattr(np, name))(x)
    tol = 1e-14 if dtype == np.float64 and name == "i0" else None
    check(getattr(xnp, name)(x), want, err=name, tol=tol)


def test_inverse_trigonometric_edges_and_complex():
    check(xnp.arccos(np.array([-1.0, 1.0, 0.0])), np.arccos([-1.0, 1.0, 0.0]))
    check(xnp.arcsinh(np.array([1e30, -1e30, 0.0], np.float32)),
          np.arcsinh(np.array([1e30, -1e30, 0.0], np.float32)))
    check(xnp.arccosh(np.array([1.0, 1e30])), np.arccosh([1.0, 1e30]))
    with np.errstate(divide="ignore"):
        check(xnp.arctanh(np.array([1.0, -1.0])), np.arctanh([1.0, -1.0]))
    z = normal((6,), np.float64) * 0.5 + 1j * normal((6,), np.float64) * 0.5
    for name in ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh"):
        check(getattr(xnp, name)(z), getattr(np, name)(z), tol=1e-10, err=name)
    for name in ("exp2", "log2", "log10"):
        check(getattr(xnp, name)(z), getattr(np, name)(z), tol=1e-12, err=name)


def test_integer_inputs_compute_in_float32():
    i = ints((4,), 1, 9)
    for name in ("arctan", "log2", "exp2", "deg2rad", "sinc", "i0", "fabs"):
        out = getattr(xnp, name)(i)
        assert out.dtype == np.float32, name
        check(out, getattr(np, name)(i).astype(np.float32), err=name)


BINARY = {
    "copysign": (lambda s, t: normal(s, t), lambda s, t: normal(s, t), None),
    "hypot": (lambda s, t: normal(s, t) * 1e3, lambda s, t: normal(s, t), None),
    "logaddexp": (lambda s, t: normal(s, t) * 10, lambda s, t: normal(s, t) * 10, None),
    "logaddexp2": (lambda s, t: normal(s, t) * 10, lambda s, t: normal(s, t) * 10, None),
    # JAX keeps the inexact type (NumPy computes in f64)
    "float_power": (lambda s, t: uniform(s, 0.1, 3, t), lambda s, t: normal(s, t),
                    lambda a, b: np.float_power(a, b).astype(np.result_type(a, b))),
    "fmax": (lambda s, t: np.where(normal(s) > 0.5, np.nan, normal(s)).astype(t),
             lambda s, t: np.where(normal(s) > 0.5, np.nan, normal(s)).astype(t), None),
    "fmin": (lambda s, t: np.where(normal(s) > 0.5, np.nan, normal(s)).astype(t),
             lambda s, t: np.where(normal(s) > 0.5, np.nan, normal(s)).astype(t), None),
    "heaviside": (lambda s, t: np.round(normal(s, t)), lambda s, t: normal(s, t), None),
    "nextafter": (lambda s, t: normal(s, t), lambda s, t: normal(s, t), None),
    "atan2": (lambda s, t: normal(s, t), lambda s, t: normal(s, t), np.arctan2),
    "pow": (lambda s, t: uniform(s, 0.1, 3, t), lambda s, t: normal(s, t), np.power),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [((5,), (5,)), ((2, 1, 4), (3, 1)), ((), (4,))])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_functions_match_numpy(name, shapes, dtype):
    sample_a, sample_b, ref = BINARY[name]
    a, b = sample_a(shapes[0], dtype), sample_b(shapes[1], dtype)
    check(getattr(xnp, name)(a, b), (ref or getattr(np, name))(a, b), err=name)


def test_float_bits_functions():
    x = np.array([8.0, 0.0, -3.5, 1e-40, np.inf, -np.inf, np.nan, 2.0 ** -130, -0.0],
                 np.float32)
    check(xnp.frexp(x), np.frexp(x))
    check(xnp.frexp(x.astype(np.float64)), np.frexp(x.astype(np.float64)))
    check(xnp.signbit(x), np.signbit(x))
    check(xnp.modf(x * 1.5), np.modf(x * 1.5))
    m, e = np.frexp(x)
    check(xnp.ldexp(m, e), np.ldexp(m, e))
    with np.errstate(over="ignore"):
        want = np.ldexp(np.float32(1.5), np.array([-140, 0, 127, 130])).astype(np.float32)
    check(xnp.ldexp(np.float32(1.5), np.array([-140, 0, 127, 130])), want)
    check(xnp.nextafter(np.float32([0, 0, 1, -1, np.inf]), np.float32([1, -1, 0, -2, 0])),
          np.nextafter(np.float32([0, 0, 1, -1, np.inf]), np.float32([1, -1, 0, -2, 0])))
    check(xnp.spacing(np.float64([0, 1, -1e10])), np.spacing(np.float64([0, 1, -1e10])))


def test_integer_functions():
    a, b = ints((3, 4), -30, 30), ints((4,), -12, 13)
    check(xnp.gcd(a, b), np.gcd(a, b))
    check(xnp.lcm(a, b), np.lcm(a, b))
    check(xnp.gcd(a.astype(np.int64), 0), np.gcd(a.astype(np.int64), 0))
    check(xnp.divmod(a, np.where(b == 0, 1, b)), np.divmod(a, np.where(b == 0, 1, b)))
    check(xnp.bitwise_count(a), np.bitwise_count(a))
    check(xnp.bitwise_count(a.astype(np.uint16)), np.bitwise_count(a.astype(np.uint16)))
    check(xnp.bitwise_left_shift(a, 2), np.left_shift(a, 2))
    check(xnp.bitwise_right_shift(a, 1), np.right_shift(a, 1))


def test_comparisons_of_arrays():
    a = normal((3, 4), np.float64)
    b = a + np.where(normal((3, 4)) > 0, 1e-9, 1e-3)
    b[0, 0], a[1, 1], b[1, 1], a[2, 2], b[2, 2] = np.nan, np.inf, np.inf, np.nan, np.nan
    check(xnp.isclose(a, b), np.isclose(a, b))
    check(xnp.isclose(a, b, rtol=1e-2, equal_nan=True), np.isclose(a, b, rtol=1e-2,
                                                                   equal_nan=True))
    i = ints((5,))
    check(xnp.isclose(i, i[::-1]), np.isclose(i, i[::-1]))
    assert bool(xnp.allclose(a[0, 1:], a[0, 1:] + 1e-12)) and not bool(xnp.allclose(a, b))
    assert bool(xnp.array_equal(a, a, equal_nan=True)) and not bool(xnp.array_equal(a, a))
    assert not bool(xnp.array_equal(a, a[:2]))
    assert bool(xnp.array_equiv(a[0], np.broadcast_to(a[0], (2, 4))))
    assert not bool(xnp.array_equiv(a[0], a[:2, :3]))
    z = np.array([1 + 2j, 3, 0j, 2.5])
    check(xnp.iscomplex(z), np.iscomplex(z))
    check(xnp.isreal(z), np.isreal(z))
    check(xnp.iscomplex(a), np.iscomplex(a))
    check(xnp.angle(z), np.angle(z))
    check(xnp.angle(z, deg=True), np.angle(z, deg=True))
    check(xnp.angle(a), np.angle(a))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_nan_to_num(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 1.5], dtype)
    if np.dtype(dtype).kind == "c":
        x.imag = [1.0, np.nan, -np.inf, np.inf]
    check(xnp.nan_to_num(x), np.nan_to_num(x))
    check(xnp.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0),
          np.nan_to_num(x, nan=-1.0, posinf=9.0, neginf=-9.0))


# -- scalar types and dtype functions ----------------------------------------------------------

def test_scalar_types_and_dtype_functions():
    assert np.dtype(xnp.float32) == np.float32 and xnp.zeros(2, xnp.float32).dtype == xnp.float32
    assert xnp.zeros(2).dtype == default_float().numpy_dtype  # (f64: the suite runs with x64)
    check(xnp.float32(3), np.float32(3))
    check(xnp.int16([1, 2]), np.array([1, 2], np.int16))
    assert xnp.asarray(np.ones(2), xnp.bfloat16).shape == (2,)
    assert xnp.issubdtype(xnp.bfloat16, xnp.floating) and xnp.issubdtype(np.int8, xnp.integer)
    assert xnp.finfo(xnp.bfloat16).eps == 2 ** -7 and xnp.finfo(np.float32).eps == \
        np.finfo(np.float32).eps
    assert xnp.iinfo(xnp.int32).max == 2 ** 31 - 1
    assert xnp.result_type(np.int8, 2) == np.int8 and xnp.result_type(np.float32, 1.0) == \
        np.float32
    assert xnp.promote_types(np.int8, np.uint8) == np.int16
    assert xnp.can_cast(np.int8, np.float32) and not xnp.can_cast(np.float64, np.int32)
    assert xnp.isdtype(np.float32, "real floating") and xnp.isdtype(np.int8, ("bool",
                                                                              "integral"))
    assert xnp.iscomplexobj(np.zeros(2, np.complex64)) and xnp.isrealobj(np.zeros(2))
    assert xnp.isscalar(1.0) and xnp.isscalar(np.zeros(())) and not xnp.isscalar(np.zeros(2))
    assert xnp.size(np.zeros((2, 3))) == 6 and xnp.size(np.zeros((2, 3)), 1) == 3
    assert isinstance(np.zeros(2), xnp.ndarray) and not isinstance([1], xnp.ndarray)
    assert (xnp.pi, xnp.e, xnp.euler_gamma) == (np.pi, np.e, np.euler_gamma)
    assert xnp.newaxis is None and np.isinf(xnp.inf) and np.isnan(xnp.nan)


def test_defaults_without_x64_are_32_bit():
    saved = config.jax_enable_x64
    config.update("enable_x64", False)
    try:
        assert xnp.array([1.5, 2]).dtype == np.float32
        assert xnp.array(np.arange(3)).dtype == np.int32
        assert xnp.zeros(2, np.float64).dtype == np.float32
        assert xnp.tri(3).dtype == np.float32 and xnp.indices((2, 2)).dtype == np.int32
        assert xnp.quantile(np.arange(5), 0.5).dtype == np.float32
        assert xnp.linalg.det(np.eye(3)).dtype == np.float32
    finally:
        config.update("enable_x64", saved)


# -- creation ----------------------------------------------------------------------------------

def test_creation_functions():
    F, I = default_float().numpy_dtype, default_int().numpy_dtype
    check(xnp.array([[1, 2], [3, 4]]), np.array([[1, 2], [3, 4]]))
    check(xnp.array([1, 2], dtype=np.float32, ndmin=3), np.array([1, 2], np.float32, ndmin=3))
    check(xnp.copy(np.arange(3)), np.arange(3))
    check(xnp.empty((2, 3)), np.zeros((2, 3), F))  # JAX's defaults: F, I (64-bit with x64)
    check(xnp.empty_like(np.arange(3)), np.zeros(3, np.int64))
    check(xnp.logspace(0, 3, 4), np.logspace(0, 3, 4).astype(F))
    check(xnp.logspace(1, 2, 5, base=2.0, endpoint=False),
          np.logspace(1, 2, 5, base=2.0, endpoint=False).astype(F))
    check(xnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4).astype(F))
    check(xnp.geomspace(-2, -32, 5, dtype=np.float64), np.geomspace(-2, -32, 5))
    check(xnp.indices((2, 3)), np.indices((2, 3)).astype(I))
    check(xnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True), dtype=False)
    check(xnp.fromfunction(lambda i, j: i + 2 * j, (2, 3), dtype=np.float32),
          np.fromfunction(lambda i, j: i + 2 * j, (2, 3), dtype=np.float32))
    a, b, c = np.arange(3), np.arange(4.0), np.arange(2)
    for indexing in ("xy", "ij"):
        check(xnp.meshgrid(a, b, c, indexing=indexing), np.meshgrid(a, b, c, indexing=indexing))
        check(xnp.meshgrid(a, b, sparse=True, indexing=indexing),
              np.meshgrid(a, b, sparse=True, indexing=indexing))
    check(xnp.mgrid[0:2, 1:4], np.mgrid[0:2, 1:4].astype(I))
    check(xnp.mgrid[0:1:5j], np.mgrid[0:1:5j].astype(F))
    check(xnp.ogrid[0:2, 0:3], [g.astype(I) for g in np.ogrid[0:2, 0:3]])
    check(xnp.r_[1:4, 0, np.array([7, 8])], np.r_[1:4, 0, np.array([7, 8])].astype(np.int32),
          dtype=False)
    check(xnp.r_["-1,2,0", np.array([1, 2])], np.r_["-1,2,0", np.array([1, 2])])
    check(xnp.c_[np.array([1, 2]), np.array([3, 4])], np.c_[np.array([1, 2]), np.array([3, 4])])
    check(xnp.ix_(np.array([0, 1]), np.array([2, 4, 5])),
          np.ix_(np.array([0, 1]), np.array([2, 4, 5])))
    check(xnp.vander(np.array([1, 2, 3])), np.vander(np.array([1, 2, 3])))
    check(xnp.vander(np.array([1.5, 2.0]), 4, increasing=True),
          np.vander(np.array([1.5, 2.0]), 4, increasing=True))
    buf = np.arange(4, dtype=np.int16).tobytes()
    check(xnp.frombuffer(buf, np.int16), np.frombuffer(buf, np.int16))
    check(xnp.fromiter(range(3), np.int32), np.arange(3, dtype=np.int32))
    assert xnp.array_str(np.arange(3)) == np.array_str(np.arange(3))


def test_array_of_traced_values_and_eager_at():
    x = normal((4,), np.float64)
    check(vmap(lambda t: xnp.asarray([t.sum(), t.max(), 2.0]))(np.stack([x, -x])),
          np.array([[x.sum(), x.max(), 2.0], [-x.sum(), (-x).max(), 2.0]]))
    check(vmap(lambda t: xnp.array([[t[0], 1], [0, t[1]]], dtype=np.float32))(x.reshape(2, 2)),
          np.array([[[x[0], 1], [0, x[1]]], [[x[2], 1], [0, x[3]]]], np.float32))
    check(xnp.asarray(x).at[0].set(5.0), np.concatenate([[5.0], x[1:]]))
    n = np.arange(3.0)
    copied = xnp.array(n)
    n[0] = 9.0
    assert copied[0] == 0.0


@pytest.mark.parametrize("k", [-2, 0, 1])
def test_triangles_and_diagonals(k):
    m = normal((2, 4, 5), np.float64)
    check(xnp.tri(4, 5, k), np.tri(4, 5, k).astype(default_float().numpy_dtype))
    check(xnp.tril(m, k), np.tril(m, k))
    check(xnp.triu(m, k), np.triu(m, k))
    check(xnp.diag(m[0], k), np.diag(m[0], k))
    check(xnp.diag(np.arange(3), k), np.diag(np.arange(3), k))
    check(xnp.diagflat(np.arange(4).reshape(2, 2), k), np.diagflat(np.arange(4).reshape(2, 2), k))
    check(xnp.diagonal(m, k, 1, 2), np.diagonal(m, k, 1, 2))
    check(xnp.diagonal(m, k, 2, 0), np.diagonal(m, k, 2, 0))
    check(xnp.trace(m, k, 1, 2), np.trace(m, k, 1, 2))
    check(xnp.tril_indices(4, k, 5), np.tril_indices(4, k, 5), dtype=False)
    check(xnp.triu_indices_from(m[0], k), np.triu_indices_from(m[0], k), dtype=False)
    check(xnp.tril_indices_from(m[0], k), np.tril_indices_from(m[0], k), dtype=False)
    check(xnp.triu_indices(3, k), np.triu_indices(3, k), dtype=False)
    check(xnp.mask_indices(3, xnp.triu, k), np.mask_indices(3, np.triu, k), dtype=False)
    check(xnp.diag_indices(3, 3), np.diag_indices(3, 3), dtype=False)
    check(xnp.diag_indices_from(np.zeros((2, 2))), np.diag_indices_from(np.zeros((2, 2))),
          dtype=False)


@pytest.mark.parametrize("M", [0, 1, 6, 7])
def test_window_functions(M):
    for name in ("bartlett", "blackman", "hamming", "hanning"):
        check(getattr(xnp, name)(M), getattr(np, name)(M).astype(np.float32), err=name)
    check(xnp.kaiser(M, 5.0), np.kaiser(M, 5.0).astype(np.float32))


# -- joining, splitting, rearranging -----------------------------------------------------------

def test_joining_and_splitting():
    a, b = normal((2, 3)), normal((2, 3))
    check(xnp.append(a, b), np.append(a, b))
    check(xnp.append(a, b, axis=1), np.append(a, b, axis=1))
    check(xnp.concat([a, b], axis=1), np.concatenate([a, b], axis=1))
    check(xnp.column_stack([np.arange(3), np.arange(3.0)]),
          np.column_stack([np.arange(3), np.arange(3.0)]))
    check(xnp.dstack([a, b]), np.dstack([a, b]))
    check(xnp.atleast_3d(np.arange(3)), np.atleast_3d(np.arange(3)))
    check(xnp.atleast_3d(a, 1.0), np.atleast_3d(a, 1.0), dtype=False)
    check(xnp.atleast_1d(1, np.arange(2)), np.atleast_1d(1, np.arange(2)), dtype=False)
    check(xnp.block([[a, b], [b, a]]), np.block([[a, b], [b, a]]))
    check(xnp.block([np.arange(2.0), 5.0]), np.block([np.arange(2.0), 5.0]))
    check(xnp.broadcast_arrays(a, b[0], 1.0), np.broadcast_arrays(a, b[0], 1.0), dtype=False)
    x = np.arange(24.0).reshape(2, 3, 4)
    for sections in (3, [1, 5]):
        check(xnp.array_split(np.arange(7), sections), np.array_split(np.arange(7), sections))
    check(xnp.array_split(x, 2, axis=2), np.array_split(x, 2, axis=2))
    check(xnp.hsplit(x, 3), np.hsplit(x, 3))
    check(xnp.hsplit(np.arange(6), 2), np.hsplit(np.arange(6), 2))
    check(xnp.vsplit(x, [1]), np.vsplit(x, [1]))
    check(xnp.dsplit(x, 2), np.dsplit(x, 2))
    check(xnp.unstack(x, axis=1), tuple(np.moveaxis(x, 1, 0)))


def test_rearranging():
    x = normal((2, 3, 4))
    check(xnp.fliplr(x), np.fliplr(x))
    check(xnp.flipud(x), np.flipud(x))
    for k in range(-1, 5):
        check(xnp.rot90(x, k), np.rot90(x, k), err=f"k={k}")
        check(xnp.rot90(x, k, (2, 0)), np.rot90(x, k, (2, 0)), err=f"k={k}")
    for axis, start in ((2, 0), (0, 3), (1, 1), (-1, 1)):
        check(xnp.rollaxis(x, axis, start), np.rollaxis(x, axis, start))
    check(xnp.matrix_transpose(x), np.matrix_transpose(x))
    check(xnp.permute_dims(x, (2, 0, 1)), np.permute_dims(x, (2, 0, 1)))
    check(xnp.resize(np.arange(5), (3, 4)), np.resize(np.arange(5), (3, 4)))
    check(xnp.resize(x, 7), np.resize(x, 7))


def test_insert_and_delete():
    a = np.arange(12).reshape(3, 4)
    cases = [((a, 1, 9), {}), ((a, [0, 2, 2], [7, 8, 9]), {}), ((a, 1, 5), {"axis": 1}),
             ((a, [1, 3], [[7], [8], [9]]), {"axis": 1}), ((a, 2, [[1, 2, 3, 4]]), {"axis": 0}),
             ((a, slice(1, 3), -1), {"axis": 1}), ((a, 0, np.array([5, 6, 7])), {"axis": 1})]
    for args, kwargs in cases:
        check(xnp.insert(*args, **kwargs), np.insert(*args, **kwargs), err=str(args[1:]))
    for obj, axis in ((1, None), ([0, 2], 1), (slice(0, 3, 2), 1), (-1, 0)):
        check(xnp.delete(a, obj, axis), np.delete(a, obj, axis), err=str(obj))


# -- choosing, mapping, placing ----------------------------------------------------------------

def test_select_choose_piecewise():
    x = normal((3, 4), np.float64)
    check(xnp.select([x > 0.5, x < -0.5], [x, 2 * x], 7.0),
          np.select([x > 0.5, x < -0.5], [x, 2 * x], 7.0))
    idx = ints((3, 4), 0, 3)
    choices = [np.arange(4), 10 + np.arange(4), 100 * np.ones((3, 4), np.int64)]
    check(xnp.choose(idx, choices), np.choose(idx, choices))
    check(xnp.choose(idx + 2, choices, mode="wrap"), np.choose(idx + 2, choices, mode="wrap"))
    check(xnp.choose(idx + 2, choices, mode="clip"), np.choose(idx + 2, choices, mode="clip"))
    with pytest.raises(ValueError):
        xnp.choose(idx + 3, choices)
    funcs = [lambda t: -t, lambda t: t * 2, 5.0]
    check(xnp.piecewise(x, [x < -0.3, x > 0.3], funcs),
          np.piecewise(x, [x < -0.3, x > 0.3], funcs))
    check(xnp.piecewise(x, [x < 0], [lambda t: t ** 2]), np.piecewise(x, [x < 0],
                                                                       [lambda t: t ** 2]))


def test_vectorize_and_apply():
    x = normal((3, 4), np.float64)
    f = xnp.vectorize(lambda a, b: a * b + 1.0)
    check(f(x, x[0]), x * x[0] + 1.0)
    g = xnp.vectorize(lambda u, v: xnp.sum(u * v), signature="(n),(n)->()")
    check(g(x, x[1]), np.sum(x * x[1], -1))
    h = xnp.vectorize(lambda u, s: u * s, excluded={1})
    check(h(x, 3.0), 3.0 * x)
    check(xnp.apply_along_axis(lambda r: xnp.sum(r ** 2), 1, x), np.sum(x ** 2, 1))
    check(xnp.apply_along_axis(lambda r: r[::-1] * 2, 0, x), x[::-1] * 2)
    check(xnp.apply_along_axis(lambda r: xnp.outer(r, r), 0, x),
          np.apply_along_axis(lambda r: np.outer(r, r), 0, x))
    check(xnp.apply_over_axes(xnp.sum, x, [0, 1]), np.apply_over_axes(np.sum, x, [0, 1]))


def test_functional_writers():
    a = np.arange(12.0).reshape(3, 4)
    want = a.copy()
    np.put(want, [1, 5, 30], [-1, -2, -3], mode="clip")
    check(xnp.put(a, np.array([1, 5, 30]), np.array([-1.0, -2, -3]), mode="clip",
                  inplace=False), want)
    want = a.copy()
    np.place(want, a % 3 == 0, [7, 8])
    check(xnp.place(a, a % 3 == 0, np.array([7.0, 8.0]), inplace=False), want)
    idx = np.array([[0], [2], [1]])
    want = a.copy()
    np.put_along_axis(want, idx, -5.0, 1)
    check(xnp.put_along_axis(a, idx, -5.0, 1, inplace=False), want)
    want = np.zeros((4, 3))
    np.fill_diagonal(want, [1, 2])
    check(xnp.fill_diagonal(np.zeros((4, 3)), np.array([1.0, 2.0]), inplace=False), want)
    with pytest.raises(ValueError, match="inplace=False"):
        xnp.put(a, [0], 1.0)


def test_index_arithmetic_and_bits():
    idx = (np.array([1, 2, 0]), np.array([3, 0, 1]))
    for mode in ("raise", "clip", "wrap"):
        check(xnp.ravel_multi_index(idx, (3, 4), mode=mode),
              np.ravel_multi_index(idx, (3, 4), mode=mode), err=mode)
    check(xnp.ravel_multi_index((np.array([5, -1]), np.array([0, 9])), (3, 4), mode="wrap"),
          np.ravel_multi_index((np.array([5, -1]), np.array([0, 9])), (3, 4), mode="wrap"))
    check(xnp.unravel_index(np.array([5, 11, 0]), (3, 4)),
          np.unravel_index(np.array([5, 11, 0]), (3, 4)))
    bits = ints((2, 11), 0, 2).astype(bool)
    for axis in (None, 1, 0):
        for order in ("big", "little"):
            check(xnp.packbits(bits, axis, order), np.packbits(bits, axis, bitorder=order))
    packed = np.array([[3, 255, 17]], np.uint8)
    for axis in (None, 1):
        check(xnp.unpackbits(packed, axis), np.unpackbits(packed, axis))
    check(xnp.unpackbits(packed, 1, count=10, bitorder="little"),
          np.unpackbits(packed, 1, count=10, bitorder="little"))


def test_sort_based():
    keys = (ints((7,), 0, 3), ints((7,), 0, 3))
    check(xnp.lexsort(keys), np.lexsort(keys).astype(np.int32), dtype=False)
    k2 = ints((2, 7), 0, 3)
    check(xnp.lexsort(k2, axis=0), np.lexsort(k2, axis=0), dtype=False)
    x = normal((3, 6), np.float64)
    part = np.asarray(xnp.partition(x, 2, axis=1))
    assert np.all(part[:, :2] <= part[:, 2:3]) and np.all(part[:, 3:] >= part[:, 2:3])
    check(part[:, 2], np.partition(x, 2, axis=1)[:, 2])
    ip = np.asarray(xnp.argpartition(x, 4, axis=1))
    check(np.take_along_axis(x, ip, 1)[:, 4], np.partition(x, 4, axis=1)[:, 4])
    z = np.array([1 + 2j, 1 - 1j, -3 + 0j, 1 + 0j])
    check(xnp.sort_complex(z), np.sort_complex(z))
    check(xnp.sort_complex(np.array([3.0, 1, 2])), np.sort_complex(np.array([3.0, 1, 2])))


# -- statistics --------------------------------------------------------------------------------

def with_nans(shape, dtype=np.float64):
    x = normal(shape, dtype)
    x[RNG.random(shape) < 0.3] = np.nan
    return x


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
def test_nan_reductions(axis):
    x = with_nans((3, 4, 5))
    x[0, :, 0] = np.nan
    for name in ("nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd"):
        with _quiet():
            want = getattr(np, name)(x, axis=axis)
        check(getattr(xnp, name)(x, axis=axis), want, err=name)
    with _quiet():
        check(xnp.nanvar(x, axis=axis, ddof=1, keepdims=True),
              np.nanvar(x, axis=axis, ddof=1, keepdims=True))
    i = ints((3, 4))
    check(xnp.nansum(i, axis=0), np.nansum(i, axis=0), dtype=False)


def _quiet():
    """NumPy's warnings about all-NaN slices, silenced."""
    return warnings.catch_warnings(action="ignore")


def test_nan_arg_and_cumulative():
    x = with_nans((4, 5))
    x[1] = np.nan
    ok = ~np.all(np.isnan(x), 1)
    got = np.asarray(xnp.nanargmax(x, 1))
    check(got[ok], np.nanargmax(x[ok], 1), dtype=False)
    assert got[1] == -1  # JAX: -1 for an all-NaN slice (NumPy raises)
    check(np.asarray(xnp.nanargmin(x, 1))[ok], np.nanargmin(x[ok], 1), dtype=False)
    for axis in (None, 0, 1):
        check(xnp.nancumsum(x, axis), np.nancumsum(x, axis))
        check(xnp.nancumprod(x, axis), np.nancumprod(x, axis))
    check(xnp.cumulative_sum(np.arange(5)), np.cumulative_sum(np.arange(5)))
    check(xnp.cumulative_sum(x, axis=1, include_initial=True),
          np.cumulative_sum(x, axis=1, include_initial=True))
    check(xnp.cumulative_prod(np.arange(1, 5.0), include_initial=True),
          np.cumulative_prod(np.arange(1, 5.0), include_initial=True))
    with pytest.raises(ValueError):
        xnp.cumulative_sum(x)


def _reference_quantile(fn, x, q, axis, method, **kwargs):
    """NumPy's quantile, but ``nearest`` as JAX's: an exact tie (position
    halfway between two order statistics) takes the lower one, where NumPy
    rounds the position half to even."""
    if method != "nearest":
        return fn(x, q, axis, method=method, **kwargs)
    lo, hi = (fn(x, q, axis, method=m, **kwargs) for m in ("lower", "higher"))
    linear, mid = (fn(x, q, axis, method=m, **kwargs) for m in ("linear", "midpoint"))
    return np.where(linear <= mid, lo, hi)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("axis", [None, 1, (0, 2)])
def test_quantiles(method, axis):
    x = normal((3, 5, 4), np.float64)
    q = np.array([0.0, 0.3, 0.5, 1.0])
    check(xnp.quantile(x, q, axis, method=method),
          _reference_quantile(np.quantile, x, q, axis, method))
    check(xnp.quantile(x, 0.7, axis, method=method, keepdims=True),
          _reference_quantile(np.quantile, x, 0.7, axis, method, keepdims=True))
    check(xnp.percentile(x, 35, axis, method=method),
          _reference_quantile(np.percentile, x, 35, axis, method))
    y = with_nans((3, 5, 4))
    with _quiet():
        check(xnp.nanquantile(y, q, axis, method=method),
              _reference_quantile(np.nanquantile, y, q, axis, method))
        check(xnp.quantile(y, 0.5, axis), np.quantile(y, 0.5, axis))


def test_median_average_and_friends():
    x = normal((4, 5), np.float64)
    for axis in (None, 0, 1):
        check(xnp.median(x, axis), np.median(x, axis))
        check(xnp.ptp(x, axis), np.ptp(x, axis))
        check(xnp.average(x, axis), np.average(x, axis))
        i = ints((4, 5), 0, 3)
        check(xnp.count_nonzero(i, axis), np.count_nonzero(i, axis), dtype=False)
    y = with_nans((4, 5))
    with _quiet():
        check(xnp.nanmedian(y, 1), np.nanmedian(y, 1))
        check(xnp.nanpercentile(y, [10, 90], 0), np.nanpercentile(y, [10, 90], 0))
    w = np.abs(normal((4, 5), np.float64))
    check(xnp.average(x, None, w), np.average(x, None, w))
    check(xnp.average(x, 1, w[0], returned=True), np.average(x, 1, w[0], returned=True))
    check(xnp.average(x, 0, returned=True), np.average(x, 0, returned=True))
    assert xnp.median(np.arange(4, dtype=np.int32)).dtype == np.float32  # (int64: f64, as JAX)


def test_cov_and_corrcoef():
    x, y = normal((3, 6), np.float64), normal((6,), np.float64)
    fw, aw = ints((6,), 1, 4), np.abs(normal((6,), np.float64))
    check(xnp.cov(x), np.cov(x))
    check(xnp.cov(x.T, rowvar=False, bias=True), np.cov(x.T, rowvar=False, bias=True))
    check(xnp.cov(x, y, ddof=0), np.cov(x, y, ddof=0))
    check(xnp.cov(y), np.cov(y))
    check(xnp.cov(x, fweights=fw, aweights=aw), np.cov(x, fweights=fw, aweights=aw))
    check(xnp.cov(x, aweights=aw, ddof=2), np.cov(x, aweights=aw, ddof=2))
    check(xnp.corrcoef(x), np.corrcoef(x))
    check(xnp.corrcoef(x[0], y), np.corrcoef(x[0], y))
    z = x + 1j * normal((3, 6), np.float64)
    check(xnp.cov(z), np.cov(z))


# -- value-dependent shapes --------------------------------------------------------------------

def test_nonzero_family_eagerly():
    for x in (ints((3, 4), -1, 2), ints((7,), 0, 2).astype(bool), np.zeros((2, 2))):
        check(xnp.nonzero(x), np.nonzero(x), dtype=False)
        check(xnp.flatnonzero(x), np.flatnonzero(x), dtype=False)
        check(xnp.argwhere(x), np.argwhere(x), dtype=False)
        check(xnp.where(x), np.where(x), dtype=False)
        assert xnp.nonzero(x)[0].dtype == np.int32
    x = ints((3, 4), -1, 2)
    k = int(np.count_nonzero(x))
    padded = xnp.nonzero(x, size=k + 3, fill_value=-1)
    check(padded, [np.concatenate([i, -np.ones(3, int)]) for i in np.nonzero(x)], dtype=False)
    check(xnp.nonzero(x, size=2), [i[:2] for i in np.nonzero(x)], dtype=False)
    check(xnp.argwhere(np.float32(3)), np.argwhere(np.float32(3)), dtype=False)
    cond = np.array([True, False, True])
    check(xnp.compress(cond, x, axis=0), np.compress(cond, x, axis=0))
    check(xnp.compress([0, 1], x, axis=1), np.compress([0, 1], x, axis=1))
    check(xnp.compress(cond, x), np.compress(cond, x))
    check(xnp.extract(x > 0, x), np.extract(x > 0, x))
    check(xnp.extract(x > 0, x, size=12, fill_value=9),
          np.concatenate([np.extract(x > 0, x), 9 * np.ones(12 - (x > 0).sum(), x.dtype)]))


@pytest.mark.parametrize("dtype", [np.int32, np.float64])
def test_unique(dtype):
    x = ints((4, 5), -3, 4).astype(dtype)
    if dtype == np.float64:
        x[0, :2] = np.nan
    got = xnp.unique(x, return_index=True, return_inverse=True, return_counts=True)
    want = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    check(got, want, dtype=False)
    check(xnp.unique(x, equal_nan=False), np.sort(np.unique(x, equal_nan=False)))
    n = len(want[0])
    values, index, counts = xnp.unique(x, return_index=True, return_counts=True, size=n + 2,
                                       fill_value=99)
    check(values, np.concatenate([want[0], [99, 99]]).astype(dtype))
    check(index, np.concatenate([want[1], [want[1][0]] * 2]), dtype=False)
    check(counts, np.concatenate([want[3], [0, 0]]), dtype=False)
    check(xnp.unique(x, size=2), want[0][:2])
    check(xnp.unique(x, size=n + 1)[-1], want[0][0])  # JAX's default fill: the smallest
    # the array API's unique_* keep NaNs apart and (in JAX) sort
    distinct = np.unique(x, return_index=True, return_inverse=True, return_counts=True,
                         equal_nan=False)
    check(xnp.unique_values(x), distinct[0])
    all_ = xnp.unique_all(x)
    check((all_.values, all_.indices, all_.inverse_indices, all_.counts), distinct,
          dtype=False)
    check(tuple(xnp.unique_counts(x)), (distinct[0], distinct[3]), dtype=False)
    check(tuple(xnp.unique_inverse(x)), (distinct[0], distinct[2]), dtype=False)
    check(xnp.unique(np.array([], dtype)), np.unique(np.array([], dtype)))


def test_set_operations():
    a, b = ints((9,), -4, 5), ints((2, 3), -4, 5)
    for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
        want = getattr(np, name)(a, b)
        check(getattr(xnp, name)(a, b), want, err=name, dtype=False)
        got = getattr(xnp, name)(a, b, size=len(want) + 2, fill_value=-100)
        check(got, np.concatenate([want, [-100, -100]]), err=name, dtype=False)
    check(xnp.intersect1d(a, b, return_indices=True), np.intersect1d(a, b, return_indices=True),
          dtype=False)
    for invert in (False, True):
        check(xnp.isin(b, a, invert=invert), np.isin(b, a, invert=invert))
    check(xnp.isin(b, []), np.isin(b, []))
    check(xnp.trim_zeros(np.array([0, 0, 1, 0, 2, 0])), np.trim_zeros(np.array([0, 0, 1, 0, 2,
                                                                                  0])))
    check(xnp.trim_zeros(np.array([0, 0, 1, 0]), "f"), np.trim_zeros(np.array([0, 0, 1, 0]), "f"))
    check(xnp.trim_zeros(np.zeros(3)), np.trim_zeros(np.zeros(3)))


def test_bincount_searchsorted_digitize():
    x = ints((20,), 0, 7)
    w = normal((20,), np.float64)
    check(xnp.bincount(x), np.bincount(x), dtype=False)
    check(xnp.bincount(x, w, minlength=10), np.bincount(x, w, minlength=10))
    check(xnp.bincount(x, length=4), np.bincount(x)[:4], dtype=False)
    a = np.sort(normal((11,), np.float64))
    a[3] = a[4]
    v = np.concatenate([normal((2, 4), np.float64).ravel(), a[:5], [np.nan, np.inf]])
    for side in ("left", "right"):
        check(xnp.searchsorted(a, v, side), np.searchsorted(a, v, side), dtype=False)
    check(xnp.searchsorted(np.append(a, np.nan), v), np.searchsorted(np.append(a, np.nan), v),
          dtype=False)
    perm = RNG.permutation(11)
    check(xnp.searchsorted(a[perm], v, sorter=np.argsort(a[perm])),
          np.searchsorted(a[perm], v, sorter=np.argsort(a[perm])), dtype=False)
    assert xnp.searchsorted(a, v).dtype == np.int32
    bins = np.array([-1.0, 0.0, 0.5, 2.0])
    for right in (False, True):
        check(xnp.digitize(v, bins, right), np.digitize(v, bins, right), dtype=False)
        check(xnp.digitize(v, bins[::-1], right), np.digitize(v, bins[::-1], right),
              dtype=False)


def test_histograms():
    x = normal((50,), np.float64)
    w = np.abs(normal((50,), np.float64))
    for kwargs in ({}, {"bins": 5}, {"bins": 4, "range": (-1, 1)}, {"bins": 3, "weights": w},
                   {"bins": [-2, -1, 0, 3]}, {"bins": 6, "density": True}):
        counts, edges = xnp.histogram(x, **kwargs)
        want_counts, want_edges = np.histogram(x, **kwargs)
        check(counts, want_counts.astype(np.float64), err=str(kwargs))  # JAX: float counts
        check(edges, want_edges.astype(np.float64), err=str(kwargs))
    check(xnp.histogram_bin_edges(x, 7), np.histogram_bin_edges(x, 7))
    check(xnp.histogram(np.ones(4), 2), np.histogram(np.ones(4), 2), dtype=False)
    y = normal((50,), np.float64)
    got = xnp.histogram2d(x, y, bins=(3, 4), weights=w)
    want = np.histogram2d(x, y, bins=(3, 4), weights=w)
    check(got, want)
    sample = normal((40, 3), np.float64)
    got_counts, got_edges = xnp.histogramdd(sample, bins=(2, 3, 4), density=True)
    want_counts, want_edges = np.histogramdd(sample, bins=(2, 3, 4), density=True)
    check(got_counts, want_counts)
    check(got_edges, want_edges)


def test_value_dependent_shapes_under_tracing():
    x = ints((3, 4), -1, 2)
    for fn in (xnp.nonzero, xnp.flatnonzero, xnp.argwhere, xnp.unique, xnp.where,
               lambda t: xnp.compress(t > 0, t), lambda t: xnp.union1d(t, t),
               xnp.bincount, xnp.trim_zeros):
        with pytest.raises(ConcretizationError, match="size|traced"):
            vmap(fn)(np.abs(x))
    counts = vmap(lambda t: xnp.unique(t, return_counts=True, size=4)[1])(x)
    check(counts, np.stack([np.unique(r, return_counts=True)[1] if len(np.unique(r)) == 4 else
                            np.pad(np.unique(r, return_counts=True)[1],
                                   (0, 4 - len(np.unique(r)))) for r in x]), dtype=False)


# -- signals and polynomials -------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(7, 3), (3, 7), (4, 4), (6, 1)])
def test_convolve_and_correlate(mode, lengths):
    a, v = normal((lengths[0],), np.float64), normal((lengths[1],), np.float64)
    check(xnp.convolve(a, v, mode), np.convolve(a, v, mode))
    if mode != "same" or (lengths[0] - lengths[1]) % 2 == 0 or lengths[0] >= lengths[1]:
        check(xnp.correlate(a, v, mode), np.correlate(a, v, mode))
    i, j = ints((lengths[0],)), ints((lengths[1],))
    out = xnp.convolve(i, j, mode)   # integers convolve as floats, as in JAX
    assert out.dtype == np.float32
    check(out, np.convolve(i, j, mode), dtype=False)


def test_convolve_types():
    check(xnp.convolve(np.array([1, 2, 3]), np.array([0, 1])), np.convolve([1, 2, 3], [0, 1]),
          dtype=False)
    z, w = normal((5,)) + 1j * normal((5,)), normal((3,)) + 1j * normal((3,))
    check(xnp.correlate(z, w, "full"), np.correlate(z, w, "full"), tol=1e-5)
    check(xnp.convolve(z, w), np.convolve(z, w), tol=1e-5)


def test_differences_and_integrals():
    x = normal((3, 6), np.float64)
    for n, axis in ((1, -1), (2, 1), (1, 0), (0, 1)):
        check(xnp.diff(x, n, axis), np.diff(x, n, axis))
    check(xnp.diff(x, prepend=0.0, append=x[:, :1]), np.diff(x, prepend=0.0, append=x[:, :1]))
    check(xnp.diff(np.array([True, False, False])), np.diff(np.array([True, False, False])))
    check(xnp.ediff1d(x, to_end=[9, 8], to_begin=-1), np.ediff1d(x, to_end=[9, 8], to_begin=-1))
    check(xnp.gradient(x), np.gradient(x))
    check(xnp.gradient(x, 0.5, axis=1), np.gradient(x, 0.5, axis=1))
    coords = np.cumsum(np.abs(normal((6,), np.float64))) + 0.1
    check(xnp.gradient(x, 2.0, coords), np.gradient(x, 2.0, coords))
    check(xnp.gradient(np.arange(5.0) ** 2), np.gradient(np.arange(5.0) ** 2))
    check(xnp.trapezoid(x), np.trapezoid(x))
    check(xnp.trapezoid(x, dx=0.3, axis=0), np.trapezoid(x, dx=0.3, axis=0))
    check(xnp.trapezoid(x, coords), np.trapezoid(x, coords))
    p = np.cumsum(normal((3, 9), np.float64) * 2, 1)
    for axis in (0, 1):
        check(xnp.unwrap(p, axis=axis), np.unwrap(p, axis=axis))
    check(xnp.unwrap(p, discont=4.0, period=6.0), np.unwrap(p, discont=4.0, period=6.0))


def test_interp():
    xp = np.sort(normal((8,), np.float64))
    fp = normal((8,), np.float64)
    x = np.concatenate([normal((10,), np.float64) * 2, xp[[0, 3, 7]]])
    check(xnp.interp(x, xp, fp), np.interp(x, xp, fp))
    check(xnp.interp(x, xp, fp, left=-9.0, right=9.0), np.interp(x, xp, fp, -9.0, 9.0))
    check(xnp.interp(x, xp, fp + 1j * fp[::-1]), np.interp(x, xp, fp + 1j * fp[::-1]))
    xp2 = np.array([-180.0, -170, -185, 185, -10, -5, 0, 365])
    check(xnp.interp(x * 100, xp2, fp, period=360), np.interp(x * 100, xp2, fp, period=360))


def test_polynomials():
    p, q = normal((4,), np.float64), normal((2,), np.float64)
    x = normal((2, 3), np.float64)
    check(xnp.polyval(p, x), np.polyval(p, x))
    check(xnp.polyval(np.array([3, 0, 1]), 5), np.polyval([3, 0, 1], 5))
    check(xnp.polyadd(p, q), np.polyadd(p, q))
    check(xnp.polysub(q, p), np.polysub(q, p))
    check(xnp.polymul(p, q), np.polymul(p, q))
    quot, rem = xnp.polydiv(p, q)
    want_q, want_r = np.polydiv(p, q)
    check(quot, want_q)
    check(np.asarray(rem)[-len(want_r):], want_r)  # JAX keeps u's length (leading zeros)
    check(np.asarray(rem)[:-len(want_r)], np.zeros(len(p) - len(want_r)))
    for m in (1, 2, 5):
        check(xnp.polyder(p, m), np.polyder(p, m))
    check(xnp.polyint(p), np.polyint(p))
    check(xnp.polyint(p, 2, [1.0, 2.0]), np.polyint(p, 2, [1.0, 2.0]))
    check(xnp.poly(np.array([1.0, -2.0, 0.5])), np.poly([1.0, -2.0, 0.5]))
    # complex roots give complex coefficients (JAX's; NumPy makes conjugate pairs real)
    check(xnp.poly(np.array([1 + 1j, 1 - 1j])), np.poly([1 + 1j, 1 - 1j]), dtype=False)
    t = np.linspace(-1, 1, 20)
    y = np.polyval([0.5, -1, 2], t) + 0.01 * normal((20,), np.float64)
    check(xnp.polyfit(t, y, 2), np.polyfit(t, y, 2), tol=1e-9)
    check(xnp.polyfit(t, np.stack([y, 2 * y], 1), 3, w=np.abs(t) + 1),
          np.polyfit(t, np.stack([y, 2 * y], 1), 3, w=np.abs(t) + 1), tol=1e-9)


# -- products ----------------------------------------------------------------------------------

def test_products():
    a, b = normal((2, 3, 4), np.float64), normal((3, 4), np.float64)
    check(xnp.vecdot(a, b), np.vecdot(a, b))
    check(xnp.vecdot(a, a, axis=1), np.vecdot(a, a, axis=1))
    z = a + 1j * a[::-1]
    check(xnp.vecdot(z, z), np.vecdot(z, z))
    check(xnp.matvec(a, b[0]), np.matvec(a, b[0]))
    check(xnp.vecmat(b[0, :3], a), np.vecmat(b[0, :3], a))
    check(xnp.vecmat(z[0, :, 0], z), np.vecmat(z[0, :, 0], z))  # conjugates x1
    check(xnp.kron(np.eye(2), b), np.kron(np.eye(2), b))
    check(xnp.kron(a, np.arange(3)), np.kron(a, np.arange(3)))
    u, v = normal((5, 3), np.float64), normal((3,), np.float64)
    check(xnp.cross(u, v), np.cross(u, v))
    with warnings.catch_warnings(action="ignore", category=DeprecationWarning):  # 2-vectors
        check(xnp.cross(u[:, :2], v[:2]), np.cross(u[:, :2], v[:2]))
        check(xnp.cross(u[:, :2], v), np.cross(u[:, :2], v))
    check(xnp.cross(u.T, v, axisa=0), np.cross(u.T, v, axisa=0))
    check(xnp.cross(u.T, u.T, axis=0), np.cross(u.T, u.T, axis=0))
    check(xnp.cross(u, v, axisc=0), np.cross(u, v, axisc=0))
    path, text = xnp.einsum_path("ij,jk,kl->il", b, b.T, b, optimize="greedy")
    assert path == np.einsum_path("ij,jk,kl->il", b, b.T, b, optimize="greedy")[0]


# -- fft ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
def test_fft_matches_numpy(norm):
    F = xnp.fft
    a = normal((3, 4, 5, 6), np.float64)
    z = a + 1j * normal((3, 4, 5, 6), np.float64)
    cases = [("fft", (z,), {}), ("ifft", (z, 7, 1), {}), ("fftn", (z,), {}),  # 4 axes: 2 ops
             ("ifftn", (z,), {"s": (3, 2), "axes": (0, 2)}), ("fft2", (a,), {}),
             ("ifft2", (z,), {"s": (5, 3)}), ("rfft", (a,), {}), ("rfft", (a, 4, 0), {}),
             ("rfftn", (a,), {}), ("rfftn", (a,), {"s": (4, 3), "axes": (0, 3)}),
             ("irfftn", (z,), {}), ("irfft", (z, 9), {}), ("irfft2", (z,), {}),
             ("rfft2", (a,), {}), ("hfft", (z,), {}), ("ihfft", (a,), {})]
    for name, args, kwargs in cases:
        check(getattr(F, name)(*args, norm=norm, **kwargs),
              getattr(np.fft, name)(*args, norm=norm, **kwargs), err=name)
    check(F.fft(a.astype(np.float32)), np.fft.fft(a).astype(np.complex64), tol=1e-4)
    assert F.fft(np.arange(4, dtype=np.int32)).dtype == np.complex64  # (int64 -> c128, as JAX)


def test_fft_helpers():
    F = xnp.fft
    check(F.fftfreq(7, 0.5), np.fft.fftfreq(7, 0.5).astype(np.float32))
    check(F.rfftfreq(8, dtype=np.float64), np.fft.rfftfreq(8))
    a = normal((4, 5))
    check(F.fftshift(a), np.fft.fftshift(a))
    check(F.ifftshift(a, axes=1), np.fft.ifftshift(a, axes=1))


def test_fft_under_jit_and_grad():
    a = normal((4, 6), np.float64)
    got = _jit_matches_eager(lambda a: (xnp.fft.rfft2(a), xnp.fft.irfft(xnp.fft.fft(a)[:, :4])),
                             a, tol=1e-10)
    check(got[0], np.fft.rfft2(a))
    check_grads(lambda t: xnp.abs(xnp.fft.rfft(t)), (a,), order=1)


# -- under jit, vmap and grad ------------------------------------------------------------------

def _jit_matches_eager(f, *args, tol=1e-4):
    got, want = jit(f)(*args), f(*args)
    for g, w in zip(pytree.tree_leaves(got), pytree.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)
    return got


def test_a_sample_of_elementwise_functions_under_jit():
    a, u, i = normal((3, 4)), uniform((3, 4), -0.9, 0.9), ints((3, 4))

    def f(a, u, i):
        return (xnp.arccos(u), xnp.arcsinh(a), xnp.arctanh(u), xnp.hypot(a, u),
                xnp.logaddexp(a, u), xnp.frexp(a), xnp.ldexp(a, i), xnp.nextafter(a, u),
                xnp.i0(a), xnp.sinc(a), xnp.isclose(a, u), xnp.gcd(i, 6), xnp.copysign(a, u))
    got = _jit_matches_eager(f, a, u, i)
    check(got[0], np.arccos(u))
    check(got[5], np.frexp(a))
    check(got[8], np.i0(a))
    check(got[11], np.gcd(i, 6))


def test_python_scalars_are_weak():
    f, i = normal((3,)), ints((3,))
    for out in (xnp.hypot(f, 2.0), xnp.copysign(f, -1), xnp.logaddexp(f, 0.5), xnp.fmax(f, 1),
                xnp.heaviside(f, 0.5), xnp.isclose(f, 1.0), xnp.select([f > 0], [f], 0),
                xnp.nan_to_num(f, nan=1.0), xnp.polyval(f, 2.0), xnp.interp(0.5, f, f)):
        assert out.dtype in (np.float32, np.bool_), out.dtype
    for out in (xnp.gcd(i, 6), xnp.lcm(i, 4), xnp.divmod(i, 3)[0], xnp.bitwise_left_shift(i, 1)):
        assert out.dtype == np.int32, out.dtype


def test_a_sample_of_array_functions_under_jit():
    a, i = normal((3, 4)), ints((3, 4), -2, 3)

    def f(a, i):
        return (xnp.rot90(a), xnp.insert(a, 1, 5.0, 1), xnp.delete(a, 0, 1), xnp.tril(a, -1),
                xnp.quantile(a, 0.25, 1), xnp.nanmean(a), xnp.cov(a),
                xnp.searchsorted(xnp.sort(a[0]), a[1]), xnp.interp(a[1], xnp.sort(a[0]), a[2]),
                xnp.convolve(a[0], a[1]), xnp.polyval(a[0], a[1]))
    got = _jit_matches_eager(f, a, i)
    check(got[4], np.quantile(a, 0.25, 1))
    check(got[6], np.cov(a).astype(np.float32))
    check(got[8], np.interp(a[1], np.sort(a[0]), a[2]).astype(np.float32))


def test_value_dependent_functions_under_jit_with_size():
    i = ints((3, 4), -2, 3)

    def f(i):
        return (xnp.nonzero(i, size=12, fill_value=-1), xnp.unique(i, size=6, fill_value=-9),
                xnp.union1d(i[0], i[1], size=8), xnp.isin(i, np.array([1, 2])),
                xnp.bincount(xnp.abs(i).ravel(), length=4), xnp.argwhere(i, size=3))
    got = _jit_matches_eager(f, i)
    k = np.count_nonzero(i)
    check(got[0][0][:k], np.nonzero(i)[0], dtype=False)
    u = np.unique(i)
    check(got[1][:len(u)], u)
    with pytest.raises(ConcretizationError, match="size="):
        jit(xnp.unique)(i)


def test_grad_and_vmap_of_a_sample():
    x = uniform((5,), -0.8, 0.8, np.float64)
    check_grads(lambda t: xnp.sum(xnp.arcsin(t) * xnp.arctanh(t) + xnp.hypot(t, 0.5)
                                  + xnp.logaddexp(t, -t)), (x,), order=1)
    check_grads(lambda t: xnp.sum(xnp.quantile(t, np.array([0.2, 0.7]))) + xnp.nanmean(t)
                + xnp.sum(xnp.interp(t, xnp.sort(t), t ** 2)), (x,), order=1)
    check(grad(lambda t: xnp.sum(xnp.sinc(t)))(np.zeros(2)), np.zeros(2))
    m = normal((4, 6), np.float64)
    check(vmap(lambda r: xnp.polyval(r[:3], r[3:]))(m), np.stack([np.polyval(r[:3], r[3:])
                                                                   for r in m]))
    check(vmap(lambda r: xnp.searchsorted(np.arange(5.0), r))(m),
          np.searchsorted(np.arange(5.0), m.ravel()).reshape(m.shape), dtype=False)
