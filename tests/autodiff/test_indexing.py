"""Derivatives and batching of gather and the scatters (autodiff/indexing.py).

Derivatives are checked against finite differences (``check_grads``), vmap
against stacking per-slice results (``check_vmap``).  Index sets include
duplicates and out-of-bounds starts: Gather clamps them, Scatter skips the
windows that do not fit, and the rules must agree with that.
"""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import check_grads, grad, jvp
from numxla.compile import jit
from numxla.primitives import GatherDimensionNumbers as GDN, ScatterDimensionNumbers as SDN
from tests.autodiff.util import check_vmap
from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import bf16_to_f32

I32 = np.int32


def _rng(seed):
    return np.random.default_rng(seed)


# Each case: operand shape, indices, gather dimension numbers, slice sizes.
# The scatter cases use the same structure (updates = the gather's result shape).
_ROW_IDX = np.array([[0], [3], [7], [-2], [1], [3]], I32)          # 7, -2 out of bounds
_PAIR_IDX = np.array([[[0, 1], [2, 0]], [[1, 3], [5, -1]]], I32)   # (5, -1) out of bounds
_BATCH_IDX = np.array([[[2], [0], [2]], [[1], [4], [1]], [[3], [3], [0]]], I32)

CASES = {
    # rows of a matrix, with a window of 3 of the 4 columns
    "rows": ((5, 4), _ROW_IDX,
             GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)), (1, 3)),
    # single elements of a rank-3 operand, picked by (dim 0, dim 2) pairs; dim 1 windowed
    "pairs": ((3, 2, 4), _PAIR_IDX,
              GDN(offset_dims=(2,), collapsed_slice_dims=(0, 2), start_index_map=(0, 2)),
              (1, 2, 1)),
    # per-batch-element rows: operand/indices batching dimensions
    "batched": ((3, 5, 2), _BATCH_IDX,
                GDN(offset_dims=(2,), collapsed_slice_dims=(1,), start_index_map=(1,),
                    operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1, 2)),
    # index vector maps to dimension 1, window over dimension 0 with size 2
    "window": ((4, 6), np.array([[5], [0], [2], [9]], I32),
               GDN(offset_dims=(0,), collapsed_slice_dims=(1,), start_index_map=(1,)), (2, 1)),
}


def _sdn(dn: GDN) -> SDN:
    return SDN(update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
               scatter_dims_to_operand_dims=dn.start_index_map,
               operand_batching_dims=dn.operand_batching_dims,
               scatter_indices_batching_dims=dn.start_indices_batching_dims)


def _case(name, seed=0):
    shape, idx, dn, sizes = CASES[name]
    rng = _rng(seed)
    x = rng.standard_normal(shape)
    out_shape = np.shape(lax.gather(x, idx, dn, sizes))
    return x, idx, dn, sizes, rng.standard_normal(out_shape)


def _in_bounds(idx, shape, dn, sizes):
    """The indices with every start moved into range (for smooth/unique cases)."""
    bounds = np.array([shape[d] - sizes[d] for d in dn.start_index_map])
    return np.clip(idx, 0, bounds).astype(I32)


# -- gather ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_gather_grads(name):
    x, idx, dn, sizes, _ = _case(name)
    check_grads(lambda x: lax.gather(x, idx, dn, sizes), (x,), order=2, modes=("fwd", "rev"))


def test_gather_grad_matches_numpy_counts():
    """The gradient of sum(gather(x)) counts how often each element is read
    (clamped starts read the last full window)."""
    x, idx, dn, sizes, _ = _case("rows")
    g = grad(lambda x: lax.reduce_sum(lax.gather(x, idx, dn, sizes), (0, 1)))(x)
    want = np.zeros_like(x)
    for (i,) in idx:
        want[min(max(i, 0), 5 - 1), :3] += 1
    np.testing.assert_allclose(g, want)


def test_gather_fill_mode_grads():
    x, idx, dn, sizes, _ = _case("pairs")
    check_grads(lambda x: lax.gather(x, idx, dn, sizes, mode="fill", fill_value=0.0), (x,),
                order=2, modes=("fwd", "rev"))


# -- scatter_add ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_scatter_add_grads(name):
    x, idx, dn, _, u = _case(name, seed=1)
    check_grads(lambda x, u: lax.scatter_add(x, idx, u, _sdn(dn)), (x, u), order=2,
                modes=("fwd", "rev"))


def test_scatter_add_skipped_windows_get_zero_cotangent():
    x, idx, dn, _, u = _case("rows")
    g = grad(lambda u: lax.reduce_sum(lax.scatter_add(x, idx, u, _sdn(dn)), (0, 1)))(u)
    # windows at 7 and -2 do not fit in 5 rows: XLA skips them
    want = np.ones_like(u)
    want[[2, 3]] = 0.0
    np.testing.assert_allclose(g, want)


# -- scatter (overwrite) --------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_scatter_overwrite_grads(name):
    # duplicates: the last update of a target wins, the others get no cotangent
    x, idx, dn, _, u = _case(name, seed=2)
    check_grads(lambda x, u: lax.scatter(x, idx, u, _sdn(dn)), (x, u), order=2,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("name", ["rows", "window"])
def test_scatter_overwrite_unique_grads(name):
    shape, _, dn, sizes = CASES[name]
    rng = _rng(3)
    n = shape[dn.start_index_map[0]] - sizes[dn.start_index_map[0]] + 1
    idx = rng.permutation(n)[:3].reshape(3, 1).astype(I32)
    x = rng.standard_normal(shape)
    u = rng.standard_normal(np.shape(lax.gather(x, idx, dn, sizes)))
    check_grads(lambda x, u: lax.scatter(x, idx, u, _sdn(dn), unique_indices=True), (x, u),
                order=2, modes=("fwd", "rev"))


def test_scatter_overwrite_winner_gets_cotangent():
    x = np.zeros(4)
    idx = np.array([[1], [2], [1]], I32)
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    w = np.array([1.0, 2.0, 3.0, 4.0])
    gx, gu = grad(lambda x, u: lax.reduce_sum(lax.mul(lax.scatter(x, idx, u, dn), w), (0,)),
                  (0, 1))(x, np.ones(3))
    np.testing.assert_allclose(gx, [1.0, 0.0, 0.0, 4.0])
    np.testing.assert_allclose(gu, [0.0, 3.0, 2.0])


def test_scatter_overwrite_computation_and_variadic():
    x, idx, dn, _, u = _case("rows", seed=4)
    y = _rng(5).standard_normal(x.shape)
    check_grads(lambda x, u: lax.scatter(x, idx, u, _sdn(dn),
                                         update_computation=lambda old, new: new),
                (x, u), order=2, modes=("fwd", "rev"))
    check_grads(lambda x, y, u: lax.scatter((x, y), idx, (u, lax.mul(u, u)), _sdn(dn)),
                (x, y, u), order=2, modes=("fwd", "rev"))


def test_scatter_other_computation_not_differentiable():
    x, idx, dn, _, u = _case("rows")
    fn = lambda x: lax.scatter((x, x), idx, (u, u), _sdn(dn),  # noqa: E731
                               update_computation=lambda a, b, c, d: (lax.add(a, c),
                                                                      lax.mul(b, d)))
    with pytest.raises(NotImplementedError, match="scatter"):
        grad(lambda x: lax.reduce_sum(fn(x)[0], (0, 1)))(x)


# -- scatter_mul, scatter_min, scatter_max ---------------------------------------------------

def test_scatter_mul_grads():
    x, idx, dn, _, u = _case("rows", seed=6)
    # with respect to the operand: any indices (duplicates multiply)
    check_grads(lambda x: lax.scatter_mul(x, idx, u, _sdn(dn)), (x,), order=2,
                modes=("fwd", "rev"))
    # with respect to the updates: unique indices (as in JAX)
    uidx = np.array([[4], [0], [2]], I32)
    uu = u[:3]
    check_grads(lambda x, u: lax.scatter_mul(x, uidx, u, _sdn(dn), unique_indices=True),
                (x, uu), order=2, modes=("fwd", "rev"))


def test_scatter_mul_updates_need_unique_indices():
    x, idx, dn, _, u = _case("rows")
    with pytest.raises(NotImplementedError, match="unique_indices"):
        grad(lambda u: lax.reduce_sum(lax.scatter_mul(x, idx, u, _sdn(dn)), (0, 1)))(u)


@pytest.mark.parametrize("op", ["scatter_min", "scatter_max"])
@pytest.mark.parametrize("name", ["rows", "batched", "pairs"])
def test_scatter_extremal_grads(op, name):
    # order 1: min/max are not differentiable where values tie (and finite
    # differences of the derivative jump there)
    x, idx, dn, _, u = _case(name, seed=7)
    fn = getattr(lax, op)
    check_grads(lambda x, u: fn(x, idx, u, _sdn(dn)), (x, u), order=1, modes=("fwd", "rev"))


def test_scatter_max_tie_averages():
    x = np.array([1.0, 5.0])
    idx = np.array([[0], [0]], I32)
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    gx, gu = grad(lambda x, u: lax.reduce_sum(lax.scatter_max(x, idx, u, dn), (0,)),
                  (0, 1))(x, np.array([2.0, 2.0]))
    np.testing.assert_allclose(gx, [0.0, 1.0])
    np.testing.assert_allclose(gu, [0.5, 0.5])


def test_bf16_scatter_max_derivatives_match_f32():
    """The ones that count the tied values are bf16 values, not uint16 words."""
    idx = np.array([[0], [0], [1]], I32)
    dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    x, u = np.array([1.0, 5.0], np.float32), np.array([2.0, 2.0, 5.0], np.float32)
    tx, tu = np.array([1.0, -1.0], np.float32), np.array([0.5, 2.0, 3.0], np.float32)

    def f(x, u):
        return lax.reduce_sum(lax.mul(lax.scatter_max(x, idx, u, dn), x), (0,))

    want = grad(f, (0, 1))(x, u)
    got = grad(f, (0, 1))(bf16_array(x), bf16_array(u))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(bf16_to_f32(np.asarray(g)), w)
    want_t = jvp(f, (x, u), (tx, tu))[1]
    got_t = jvp(f, (bf16_array(x), bf16_array(u)), (bf16_array(tx), bf16_array(tu)))[1]
    np.testing.assert_array_equal(bf16_to_f32(np.asarray(got_t)), want_t)


def test_jit_grad_gather_scatter():
    x, idx, dn, sizes, _ = _case("batched")

    def f(x):
        y = lax.gather(x, idx, dn, sizes)
        return lax.reduce_sum(lax.mul(lax.scatter_add(x, idx, y, _sdn(dn)), x), (0, 1, 2))
    np.testing.assert_allclose(jit(grad(f))(x), grad(f)(x), rtol=1e-12)


# -- vmap ------------------------------------------------------------------------------------

def _stack_idx(idx, n, rng, shape, dn, sizes):
    """``n`` index arrays like ``idx``, random, some out of bounds."""
    hi = np.array([shape[d] for d in dn.start_index_map])
    return np.stack([rng.integers(-1, hi + 1, size=idx.shape).astype(I32) for _ in range(n)])


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("axes", [(0, None), (1, None), (None, 0), (None, 1), (0, 0), (1, 2),
                                  (2, 0)])
def test_gather_vmap(name, axes):
    shape, idx, dn, sizes = CASES[name]
    rng = _rng(8)
    n = 3
    xs = np.moveaxis(rng.standard_normal((n, *shape)), 0, axes[0]) if axes[0] is not None \
        else rng.standard_normal(shape)
    idxs = np.moveaxis(_stack_idx(idx, n, rng, shape, dn, sizes), 0, axes[1]) \
        if axes[1] is not None else idx
    check_vmap(lambda x, i: lax.gather(x, i, dn, sizes), (xs, idxs), in_axes=axes)


_SCATTERS = ["scatter_add", "scatter", "scatter_mul", "scatter_min", "scatter_max"]


@pytest.mark.parametrize("op", _SCATTERS)
@pytest.mark.parametrize("name", ["rows", "batched", "pairs"])
@pytest.mark.parametrize("axes", [(0, None, None), (None, 0, None), (None, None, 1),
                                  (1, 0, None), (0, 1, 2), (None, 2, 0)])
def test_scatter_vmap(op, name, axes):
    shape, idx, dn, sizes = CASES[name]
    rng = _rng(9)
    n = 2
    x = rng.standard_normal(shape)
    u = rng.standard_normal(np.shape(lax.gather(x, idx, dn, sizes)))
    xs = np.moveaxis(rng.standard_normal((n, *shape)), 0, axes[0]) if axes[0] is not None \
        else x
    idxs = np.moveaxis(_stack_idx(idx, n, rng, shape, dn, sizes), 0, axes[1]) \
        if axes[1] is not None else idx
    us = np.moveaxis(rng.standard_normal((n, *u.shape)), 0, axes[2]) if axes[2] is not None \
        else u
    fn = getattr(lax, op)
    check_vmap(lambda x, i, u: fn(x, i, u, _sdn(dn)), (xs, idxs, us), in_axes=axes)


def test_scatter_variadic_vmap():
    x, idx, dn, _, u = _case("rows", seed=10)
    xs = _rng(11).standard_normal((2, *x.shape))
    check_vmap(lambda x, u: lax.scatter((x, lax.neg(x)), idx, (u, u), _sdn(dn),
                                        update_computation=lambda a, b, c, d: (c, d)),
               (xs, u), in_axes=(0, None))


def test_scatter_vmap_computation_with_batched_captured_value():
    """An update computation that closes over a batched value: a loop over the batch."""
    x, idx, dn, _, u = _case("rows", seed=12)
    scales = np.array([1.0, -2.0, 0.5])

    def f(x, s):
        return lax.scatter(x, idx, u, _sdn(dn),
                           update_computation=lambda old, new: lax.add(old, lax.mul(new, s)))
    check_vmap(f, (x, scales), (None, 0))
    check_vmap(f, (_rng(13).standard_normal((*x.shape, 3)), scales), (2, 0))
