"""Derivatives (finite differences, order 2, both modes) and vmap (against
stacked per-slice results) of the shape and data-movement ops."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import check_grads, grad, jvp, vjp, vmap
from numxla.compile import jit
from tests.autodiff.util import _rng, check_vmap
from numxla.tracer.core import bf16_array
from numxla.tracer.shapes import bf16_to_f32

CASES = range(4)


def _shape(rng, rank, lo=1, hi=4):
    return tuple(int(n) for n in rng.integers(lo, hi + 1, size=rank))


def _normal(rng, shape):
    return rng.standard_normal(shape)


# -- broadcast / broadcast_in_dim --------------------------------------------------

@pytest.mark.parametrize("seed", CASES)
def test_broadcast_grads(seed):
    rng = _rng(seed, 1)
    x = _normal(rng, _shape(rng, int(rng.integers(0, 3))))
    sizes = _shape(rng, int(rng.integers(1, 3)))
    check_grads(lambda x: lax.broadcast(x, sizes), (x,))


def _broadcast_in_dim_case(rng):
    """A result shape, its broadcast_dimensions, and an operand with some
    size-1 dimensions stretched."""
    shape = _shape(rng, int(rng.integers(1, 4)), 2, 3)
    k = int(rng.integers(0, len(shape) + 1))
    bdims = tuple(sorted(int(i) for i in rng.choice(len(shape), k, replace=False)))
    xshape = tuple(1 if rng.random() < 0.5 else shape[b] for b in bdims)
    return _normal(rng, xshape), shape, bdims


@pytest.mark.parametrize("seed", CASES)
def test_broadcast_in_dim_grads(seed):
    x, shape, bdims = _broadcast_in_dim_case(_rng(seed, 2))
    check_grads(lambda x: lax.broadcast_in_dim(x, shape, bdims), (x,))


def test_broadcast_in_dim_size_one_expansion():
    x = np.random.default_rng(0).standard_normal((1, 3, 1))
    check_grads(lambda x: lax.broadcast_in_dim(x, (2, 4, 3, 5), (0, 2, 3)), (x,))
    g = grad(lambda x: lax.reduce_sum(lax.broadcast_in_dim(x, (2, 4, 3, 5), (0, 2, 3)),
                                      (0, 1, 2, 3)))(x)
    np.testing.assert_allclose(g, np.full((1, 3, 1), 2 * 4 * 5.0))


# -- reshape / collapse / transpose / rev ------------------------------------------

@pytest.mark.parametrize("seed", CASES)
def test_reshape_grads(seed):
    rng = _rng(seed, 3)
    x = _normal(rng, _shape(rng, 3))
    sizes = (x.size,) if seed % 2 else (x.shape[0] * x.shape[1], x.shape[2])
    check_grads(lambda x: lax.reshape(x, sizes), (x,))
    check_grads(lambda x: lax.reshape(x, x.shape[::-1], (2, 1, 0)), (x,))


@pytest.mark.parametrize("dims", [(0, 1), (1, 2), (0, 1, 2), (2, 3)])
def test_collapse_grads(dims):
    x = _normal(_rng(0, 4), (2, 3, 2, 3))
    check_grads(lambda x: lax.collapse(x, dims), (x,))


@pytest.mark.parametrize("seed", CASES)
def test_transpose_and_rev_grads(seed):
    rng = _rng(seed, 5)
    x = _normal(rng, _shape(rng, 3, 2, 4))
    perm = tuple(int(i) for i in rng.permutation(3))
    dims = tuple(int(i) for i in rng.choice(3, int(rng.integers(1, 4)), replace=False))
    check_grads(lambda x: lax.transpose(x, perm), (x,))
    check_grads(lambda x: lax.rev(x, dims), (x,))


# -- slice / pad -----------------------------------------------------------------------

def _slice_case(rng):
    shape = _shape(rng, 3, 2, 6)
    starts, limits, strides = [], [], []
    for n in shape:
        s = int(rng.integers(0, n))
        starts.append(s)
        limits.append(int(rng.integers(s, n + 1)))
        strides.append(int(rng.integers(1, 4)))
    return _normal(rng, shape), tuple(starts), tuple(limits), tuple(strides)


@pytest.mark.parametrize("seed", range(6))
def test_slice_grads_with_strides(seed):
    x, starts, limits, strides = _slice_case(_rng(seed, 6))
    check_grads(lambda x: lax.slice(x, starts, limits, strides), (x,))


def _pad_case(rng):
    shape = _shape(rng, 2, 2, 4)
    config = []
    for n in shape:
        interior = int(rng.integers(0, 3))
        grown = n + (n - 1) * interior
        lo = int(rng.integers(-(grown - 1) // 2, 3))
        hi = int(rng.integers(-(grown - 1) // 2, 3))
        config.append((lo, hi, interior))
    return _normal(rng, shape), tuple(config)


@pytest.mark.parametrize("seed", range(6))
def test_pad_grads_negative_and_interior(seed):
    x, config = _pad_case(_rng(seed, 7))
    check_grads(lambda x, v: lax.pad(x, v, config), (x, np.float64(0.7)))


def test_pad_value_cotangent_is_sum_over_padding():
    x = np.arange(6.0).reshape(2, 3)
    config = ((1, -1, 1), (-1, 2, 0))
    ct = np.random.default_rng(3).standard_normal((3, 4))
    _, vjp_fn = vjp(lambda x, v: lax.pad(x, v, config), x, np.float64(0))
    ct_x, ct_v = vjp_fn(ct)
    # positions of x's elements in the result, by the document's definition
    mask = np.asarray(lax.pad(np.ones((2, 3)), 0.0, config)) == 1
    np.testing.assert_allclose(ct_v, ct[~mask].sum())
    np.testing.assert_allclose(np.asarray(ct_x).sum(), ct[mask].sum())


# -- concatenate ------------------------------------------------------------------------

@pytest.mark.parametrize("seed", CASES)
def test_concatenate_three_operands_grads(seed):
    rng = _rng(seed, 8)
    base = list(_shape(rng, 3))
    dim = int(rng.integers(0, 3))
    xs = []
    for _ in range(3):
        shape = list(base)
        shape[dim] = int(rng.integers(1, 4))
        xs.append(_normal(rng, shape))
    check_grads(lambda a, b, c: lax.concatenate([a, b, c], dim), xs)


# -- dynamic_slice / dynamic_update_slice ---------------------------------------------------

def _starts(rng, rank, bound):
    # out-of-range starts (negative, past the end) are clamped by XLA
    return tuple(np.int32(s) for s in rng.integers(-3, bound + 3, size=rank))


@pytest.mark.parametrize("seed", range(6))
def test_dynamic_slice_grads_clamped(seed):
    rng = _rng(seed, 9)
    x = _normal(rng, _shape(rng, 3, 2, 5))
    sizes = tuple(int(rng.integers(0 if seed == 0 else 1, n + 1)) for n in x.shape)
    starts = _starts(rng, 3, 5)
    check_grads(lambda x: lax.dynamic_slice(x, starts, sizes), (x,))


@pytest.mark.parametrize("seed", range(6))
def test_dynamic_update_slice_grads_clamped(seed):
    rng = _rng(seed, 10)
    x = _normal(rng, _shape(rng, 3, 2, 5))
    update = _normal(rng, tuple(int(rng.integers(1, n + 1)) for n in x.shape))
    starts = _starts(rng, 3, 5)
    check_grads(lambda x, u: lax.dynamic_update_slice(x, u, starts), (x, update))


def test_dynamic_slice_of_clamped_start_gets_the_cotangent():
    x = np.arange(5.0)
    g = grad(lambda x: lax.reduce_sum(lax.mul(lax.dynamic_slice(x, (np.int32(9),), (2,)),
                                              np.array([1.0, 10.0])), (0,)))(x)
    np.testing.assert_allclose(g, [0, 0, 0, 1, 10])


# -- iota / get_dimension_size / set_dimension_size ---------------------------------------

def test_iota_and_get_dimension_size_have_no_tangent():
    def f(x):
        n = lax.convert_element_type(lax.get_dimension_size(x, 0), np.float64)
        return lax.mul(lax.mul(x, lax.convert_element_type(lax.iota(np.int32, 3), np.float64)),
                       lax.broadcast_in_dim(n, (3,), ()))
    x = np.array([1.0, 2.0, 3.0])
    check_grads(f, (x,))
    _, t = jvp(lambda x: lax.get_dimension_size(x, 0), (x,), (np.ones(3),))
    assert t.shape == () and t.dtype.names == ("float0",)


def test_set_dimension_size_grads():
    x = np.random.default_rng(4).standard_normal((4, 3))

    def f(x):
        y = lax.set_dimension_size(x, np.int32(2), 0)
        return lax.add(lax.reduce_sum(lax.mul(y, y), (0,)), lax.reduce_sum(x, (0,)))
    check_grads(f, (x,))
    g = grad(lambda x: lax.reduce_sum(f(x), (0,)))(x)
    np.testing.assert_allclose(g, np.where(np.arange(4)[:, None] < 2, 2 * x, 0) + 1)
    # the tangent keeps the primal's dynamic size
    _, t = jvp(lambda x: lax.set_dimension_size(x, np.int32(3), 1), (x,), (np.ones((4, 3)),))
    assert getattr(t, "dynamic_sizes", None) in (None, (4, 3))
    _, t = jvp(lambda x: lax.set_dimension_size(x, np.int32(1), 1), (x,), (np.ones((4, 3)),))
    assert t.dynamic_sizes == (4, 1)


# -- one compiled second-order check ---------------------------------------------------------

def test_jit_grad_of_slice_pad_dynamic_slice():
    x = np.random.default_rng(5).standard_normal((5, 4))

    def f(x):
        y = lax.pad(lax.slice(x, (1, 0), (5, 4), (2, 3)), 0.5, ((1, -1, 1), (0, 2, 1)))
        z = lax.dynamic_slice(y, (np.int32(1), np.int32(7)), (3, 2))
        return lax.reduce_sum(lax.mul(z, z), (0, 1))
    np.testing.assert_allclose(jit(grad(f))(x), grad(f)(x), rtol=1e-12)


# -- vmap ------------------------------------------------------------------------------------

AXES = [0, 1, 2]


@pytest.mark.parametrize("ax", AXES)
def test_vmap_broadcasts(ax):
    x = _normal(_rng(ax, 11), (3, 1, 3))
    check_vmap(lambda x: lax.broadcast(x, (2, 2)), (x,), ax)
    # logical (1, 3), (3, 3) or (3, 1): size-1 dimensions stretched
    check_vmap(lambda x: lax.broadcast_in_dim(x, (2, 3, 4, 3), (1, 3)), (x,), ax)
    check_vmap(lambda x: lax.broadcast_in_dim(x, (3, 3), (0, 1)), (x,), ax)


@pytest.mark.parametrize("ax", AXES)
def test_vmap_reshape_collapse(ax):
    x = _normal(_rng(ax, 12), (3, 3, 3, 3))
    check_vmap(lambda x: lax.reshape(x, (9, 3)), (x,), ax)
    check_vmap(lambda x: lax.reshape(x, (3, 9), (2, 1, 0)), (x,), ax)
    for dims in ((0, 1), (1, 2), (0, 1, 2)):
        check_vmap(lambda x: lax.collapse(x, dims), (x,), ax)


@pytest.mark.parametrize("ax", AXES)
def test_vmap_transpose_rev(ax):
    x = _normal(_rng(ax, 13), (2, 3, 4))
    check_vmap(lambda x: lax.transpose(x, (1, 0)), (x,), ax, out_axes=1)
    check_vmap(lambda x: lax.rev(x, (1,)), (x,), ax)


@pytest.mark.parametrize("ax", AXES)
def test_vmap_slice(ax):
    x = _normal(_rng(ax, 14), (5, 5, 5))
    check_vmap(lambda x: lax.slice(x, (1, 0), (5, 4), (2, 3)), (x,), ax)


@pytest.mark.parametrize("axes", [(0, None), (1, 0), (None, 0), (2, 0)])
def test_vmap_pad(axes):
    rng = _rng(0, 15)
    x = _normal(rng, (3, 3, 3))
    v = _normal(rng, (3,)) if axes[1] is not None else np.float64(0.25)
    if axes[0] is None:
        x = x[0]
    check_vmap(lambda x, v: lax.pad(x, v, ((1, -1, 1), (-1, 2, 0))), (x, v), axes)


@pytest.mark.parametrize("axes", [(0, 0, 0), (1, None, 0), (None, 2, 1), (0, None, None)])
def test_vmap_concatenate(axes):
    rng = _rng(1, 16)
    shapes = {0: (3, 2, 2), 1: (2, 3, 2), 2: (2, 2, 3), None: (2, 2)}
    xs = [_normal(rng, shapes[a]) for a in axes]
    check_vmap(lambda a, b, c: lax.concatenate([a, b, c], 1), xs, axes)


@pytest.mark.parametrize("axes", [(0, None, None), (1, 0, None), (None, 0, 0), (2, None, 0)])
def test_vmap_dynamic_slice(axes):
    rng = _rng(2, 17)
    shapes = {0: (3, 4, 5), 1: (4, 3, 5), 2: (4, 5, 3), None: (4, 5)}
    x = _normal(rng, shapes[axes[0]])
    i = np.array([0, 3, -2], np.int32) if axes[1] is not None else np.int32(2)
    j = np.array([9, 1, 2], np.int32) if axes[2] is not None else np.int32(-1)
    check_vmap(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)), (x, i, j), axes)


@pytest.mark.parametrize("axes", [(0, None, None, None), (1, 0, None, 0), (None, 1, 0, None),
                                  (2, None, None, 0), (None, None, 0, 0)])
def test_vmap_dynamic_update_slice(axes):
    rng = _rng(3, 18)
    xs = {0: (3, 4, 5), 1: (4, 3, 5), 2: (4, 5, 3), None: (4, 5)}
    us = {0: (3, 2, 3), 1: (2, 3, 3), None: (2, 3)}
    x = _normal(rng, xs[axes[0]])
    u = _normal(rng, us[axes[1]])
    i = np.array([0, 3, -2], np.int32) if axes[2] is not None else np.int32(2)
    j = np.array([9, 1, 2], np.int32) if axes[3] is not None else np.int32(-1)
    check_vmap(lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)), (x, u, i, j), axes)


@pytest.mark.parametrize("ax", AXES)
def test_vmap_iota_and_dimension_sizes(ax):
    x = _normal(_rng(ax, 19), (3, 3, 3))

    def f(x):
        n = lax.get_dimension_size(x, 1)
        y = lax.set_dimension_size(x, np.int32(2), 1)
        k = lax.convert_element_type(lax.broadcasted_iota(np.int32, (3, 3), 0), np.float64)
        return lax.add(lax.reduce_sum(y, (1,)), lax.convert_element_type(n, np.float64)), \
            lax.mul(x, k)
    check_vmap(f, (x,), ax)


def test_vmap_set_dimension_size_over_the_size_is_refused():
    with pytest.raises(NotImplementedError, match="set_dimension_size"):
        vmap(lambda n: lax.set_dimension_size(np.ones(3), n, 0))(np.array([1, 2], np.int32))


def test_vmap_of_grad_with_batched_starts():
    """vmap of a VJP: the dynamic_update_slice of the cotangent is batched
    over the start indices (a scatter)."""
    x = _normal(_rng(0, 20), (3, 6))
    starts = np.array([0, 4, 9], np.int32)

    def g(x, s):
        return grad(lambda x: lax.reduce_sum(lax.sin(lax.dynamic_slice(x, (s,), (3,))),
                                             (0,)))(x)
    check_vmap(g, (x, starts), (0, 0))


def test_grad_of_vmap_with_batched_starts():
    """Derivatives through the gather and scatter that batched start indices
    give (their rules belong to autodiff/indexing.py)."""
    rng = _rng(1, 21)
    x, u = _normal(rng, (3, 6)), _normal(rng, (3, 2))
    starts = np.array([0, 4, 9], np.int32)
    sliced = vmap(lambda x, s: lax.dynamic_slice(x, (s,), (3,)))
    updated = vmap(lambda x, u, s: lax.dynamic_update_slice(x, u, (s,)))
    check_grads(lambda x: lax.sin(sliced(x, starts)), (x,))
    check_grads(lambda x, u: lax.sin(updated(x, u, starts)), (x, u))


# -- bf16 ------------------------------------------------------------------------------------
# The zeros the rules pad and fill with must be bf16 values, not uint16 words.

def _bf16(x):
    return bf16_array(np.asarray(x, np.float32))


def _f32(x):
    return bf16_to_f32(np.asarray(x))


def _slice_and_pad(v, p):
    sliced = lax.slice(v, (1,), (4,), (2,))
    padded = lax.pad(v, p, ((1, -1, 1),))
    return lax.add(lax.reduce_sum(lax.mul(sliced, sliced), (0,)),
                   lax.reduce_sum(lax.mul(padded, padded), (0,)))


def test_bf16_derivatives_and_vmap_match_f32():
    x, t, p = np.array([3.0, -1.0, 2.0, 0.5], np.float32), np.array([1.0, 2.0, -1.0, 0.5]), 1.5
    want = grad(_slice_and_pad, (0, 1))(x, np.float32(p))
    got = grad(_slice_and_pad, (0, 1))(_bf16(x), _bf16(p))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(_f32(g), w)
    want_t = jvp(_slice_and_pad, (x, np.float32(p)), (t.astype(np.float32), np.float32(1)))[1]
    got_t = jvp(_slice_and_pad, (_bf16(x), _bf16(p)), (_bf16(t), _bf16(1)))[1]
    np.testing.assert_array_equal(_f32(got_t), want_t)
    xs, ps = x.reshape(2, 2), np.array([7.0, -3.0], np.float32)
    f = vmap(lambda v, p: lax.pad(v, p, ((1, 2, 1),)))     # a batched padding value
    np.testing.assert_array_equal(_f32(f(_bf16(xs), _bf16(ps))), f(xs, ps))
