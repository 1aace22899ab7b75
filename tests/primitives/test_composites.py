"""jax.lax's composite functions (primitives/composites.py) against values
computed with jax.lax 0.10.2 (x64) offline, and NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.compile import jit
from numxla.tracer.core import ShapeError

X = np.array([0.25, -0.5, 0.75])
JAX_VALUES = {  # jax.lax.<name>(X)
    "acos": [1.318116071652818, 2.0943951023931957, 0.7227342478134157],
    "asin": [0.25268025514207865, -0.5235987755982989, 0.848062078981481],
    "atan": [0.24497866312686414, -0.4636476090008061, 0.6435011087932845],
    "asinh": [0.24746646154726346, -0.48121182505960347, 0.6931471805599453],
    "atanh": [0.25541281188299536, -0.5493061443340548, 0.9729550745276566],
    "sinh": [0.2526123168081683, -0.5210953054937473, 0.82231673193583],
    "cosh": [1.0314130998795732, 1.1276259652063807, 1.2946832846768448],
    "exp2": [1.189207115002721, 0.7071067811865476, 1.681792830507429],
}


@pytest.mark.parametrize("name", sorted(JAX_VALUES))
def test_inverse_and_hyperbolic_trig(name):
    np.testing.assert_allclose(getattr(lax, name)(X), JAX_VALUES[name], rtol=1e-14)
    np.testing.assert_allclose(lax.acosh(np.array([1.5, 2.0, 10.0])),
                               [0.9624236501192069, 1.3169578969248166, 2.993222846126381],
                               rtol=1e-14)
    with pytest.raises(ShapeError, match=f"{name}.*floating"):
        getattr(lax, name)(np.arange(3, dtype=np.int32))


def test_integer_pow_square_reciprocal_conj():
    x = np.array([1.5, -2.0, 3.0])
    np.testing.assert_allclose(lax.integer_pow(x, 5), [7.59375, -32.0, 243.0])
    np.testing.assert_allclose(lax.integer_pow(x, -3), [0.2962962962962963, -0.125,
                                                        0.037037037037037035])
    np.testing.assert_array_equal(lax.integer_pow(x, 0), [1, 1, 1])
    np.testing.assert_array_equal(lax.integer_pow(np.int32([3, -2]), 3), [27, -8])
    np.testing.assert_array_equal(lax.square(x), x * x)
    np.testing.assert_array_equal(lax.reciprocal(x), 1 / x)
    c = lax.conj(np.array([1.0, 2.0]))
    assert np.asarray(c).dtype == np.complex128
    np.testing.assert_array_equal(c, [1, 2])
    np.testing.assert_array_equal(lax.conj(np.array([1 + 2j])), [1 - 2j])
    got = jit(lambda v: lax.integer_pow(v, 7), tiered=False)(x)
    np.testing.assert_allclose(np.asarray(got), x ** 7, rtol=1e-15)


def test_full_select_n_and_index_helpers():
    np.testing.assert_array_equal(lax.full((2, 3), 7, np.int8), np.full((2, 3), 7, np.int8))
    assert np.asarray(lax.full((2,), 1.5, np.float32)).dtype == np.float32
    np.testing.assert_array_equal(lax.full_like(np.zeros((2, 2), np.int32), 4), np.full((2, 2), 4))
    cases = np.array([1., 2, 3]), np.array([10., 20, 30]), np.array([100., 200, 300])
    np.testing.assert_array_equal(lax.select_n(np.array([0, 2, 1]), *cases), [1, 200, 30])
    np.testing.assert_array_equal(lax.select_n(np.array([True, False, True]), *cases[:2]),
                                  [10, 2, 30])
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(lax.index_in_dim(m, -1, 1, keepdims=False), m[:, -1])
    np.testing.assert_array_equal(lax.dynamic_index_in_dim(m, np.int32(5), 0), m[2:3])  # clamped
    np.testing.assert_array_equal(
        lax.dynamic_update_index_in_dim(m, np.zeros(4), np.int32(1), 0),
        np.where(np.arange(3)[:, None] == 1, 0, m))
    a, b = lax.split(m, (1, 3), axis=1)
    np.testing.assert_array_equal(a, m[:, :1])
    np.testing.assert_array_equal(b, m[:, 1:])
    with pytest.raises(ShapeError, match="split"):
        lax.split(m, (1, 2), axis=1)
    batch = np.random.default_rng(0).standard_normal((2, 3, 4)), \
        np.random.default_rng(1).standard_normal((2, 4, 5))
    np.testing.assert_allclose(lax.batch_matmul(*batch), batch[0] @ batch[1], rtol=1e-12)
    assert lax.broadcast_to_rank(np.zeros(3), 3).shape == (1, 1, 3)


@pytest.mark.parametrize("padding, transpose_kernel, shape, total, weighted", [
    ("SAME", False, (2, 10, 10, 4), 98445.79999999999, 52280720.599999994),
    ("SAME", True, (2, 10, 10, 4), 82697.95999999999, 45525934.04),
    ("VALID", False, (2, 11, 11, 4), 107687.25, 66872441.25),
    ("VALID", True, (2, 11, 11, 4), 107687.25000000001, 71249465.25),
])
def test_conv_transpose_matches_jax(padding, transpose_kernel, shape, total, weighted):
    lhs = np.arange(2 * 5 * 5 * 3, dtype=np.float64).reshape(2, 5, 5, 3) / 10
    rhs = np.arange(3 * 3 * 3 * 4, dtype=np.float64).reshape(3, 3, 3, 4) / 20
    if transpose_kernel:
        rhs = rhs.transpose(0, 1, 3, 2)
    out = np.asarray(lax.conv_transpose(lhs, rhs, (2, 2), padding,
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                        transpose_kernel=transpose_kernel))
    assert out.shape == shape
    np.testing.assert_allclose(out.sum(), total, rtol=1e-12)
    np.testing.assert_allclose((out * np.arange(out.size).reshape(shape)).sum(), weighted,
                               rtol=1e-12)


def test_approx_top_k_is_exact():
    x = np.array([[3., 1, 4, 1, 5], [9, 2, 6, 5, 3]])
    values, indices = lax.approx_max_k(x, 2)
    np.testing.assert_array_equal(values, [[5, 4], [9, 6]])
    np.testing.assert_array_equal(indices, [[4, 2], [0, 2]])
    values, indices = lax.approx_min_k(x.T, 2, reduction_dimension=0)
    np.testing.assert_array_equal(values, [[1, 2], [1, 3]])
    np.testing.assert_array_equal(indices, [[1, 1], [3, 4]])


def test_lax_linalg():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4))
    spd = a @ a.T + 4 * np.eye(4)
    np.testing.assert_allclose(lax.linalg.cholesky(spd), np.linalg.cholesky(spd), rtol=1e-10)
    v, w = lax.linalg.eigh(spd)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(spd), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(v) @ np.diag(w) @ np.asarray(v).T, spd, atol=1e-9)
    q, r = lax.linalg.qr(a, full_matrices=False)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-12)
    lower = np.tril(spd)
    b = rng.standard_normal((4, 2))
    np.testing.assert_allclose(lax.linalg.triangular_solve(lower, b, left_side=True, lower=True),
                               np.linalg.solve(lower, b), rtol=1e-10)


def test_psum_scatter_and_axis_size():
    from numxla.compile import pmap
    x = np.arange(8.0).reshape(2, 2, 2)
    total = x.sum(0)
    got = pmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(got), total)       # replica r keeps row r
    tiled = pmap(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
                 axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(tiled), total.T[:, :, None])  # column r
    sized = pmap(lambda v: v * lax.axis_size("i"), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(sized), 2 * x)


def test_stack_unstack_tile_broadcast_like_scatter_sub():
    a, b = np.arange(6.0).reshape(2, 3), -np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(lax.stack([a, b], axis=1), np.stack([a, b], axis=1))
    np.testing.assert_array_equal(lax.stack([a, b], axis=-1), np.stack([a, b], axis=-1))
    parts = lax.unstack(a, axis=1)
    assert len(parts) == 3
    np.testing.assert_array_equal(parts[2], a[:, 2])
    np.testing.assert_array_equal(lax.tile(a, (2, 3)), np.tile(a, (2, 3)))
    np.testing.assert_array_equal(lax.broadcast_like(np.arange(3.0), a),
                                  np.broadcast_to(np.arange(3.0), (2, 3)))
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    got = lax.scatter_sub(np.zeros(4), np.array([[1], [3], [1]], np.int32),
                          np.array([1.0, 2, 3]), dn)
    np.testing.assert_array_equal(got, [0, -4, 0, -2])
    assert lax.platform_dependent(2.0, cpu=lambda v: v * 3, default=lambda v: v) == 6.0
    assert lax.composite(lambda v: v + 1, "my.add_one")(1) == 2
