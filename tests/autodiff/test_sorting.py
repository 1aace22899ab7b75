"""Derivatives and batching of sort and top_k (autodiff/sorting.py).

Keys are distinct (random floats), where sorting is differentiable: the
derivative is the permutation applied to the tangents.
"""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import check_grads, grad, jvp
from tests.autodiff.util import check_vmap


def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1)])
def test_sort_grads(shape, dim):
    check_grads(lambda x: lax.sort(x, dim), (_x(shape),), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("num_keys", [1, 2])
def test_sort_multi_operand_grads(num_keys):
    k, v = _x((3, 6), 1), _x((3, 6), 2)
    check_grads(lambda k, v: lax.sort((k, v), 1, num_keys=num_keys), (k, v), order=2,
                modes=("fwd", "rev"))


def test_sort_with_integer_operand():
    k = _x((4, 5), 3)
    ids = np.arange(20, dtype=np.int32).reshape(4, 5)
    check_grads(lambda k: lax.sort((k, ids), 0, is_stable=False)[0], (k,), order=2,
                modes=("fwd", "rev"))
    check_grads(lambda v: lax.sort((ids[::-1], v), 1)[1], (k,), order=2, modes=("fwd", "rev"))


def test_sort_comparator_grads():
    k, v = _x((3, 5), 4), _x((3, 5), 5)
    descending = lambda a, b, c, d: lax.gt(a, b)  # noqa: E731
    check_grads(lambda k, v: lax.sort((k, v), 1, comparator=descending), (k, v), order=2,
                modes=("fwd", "rev"))


def test_sort_jvp_is_permuted_tangent():
    x, t = _x((6,), 6), _x((6,), 7)
    out, t_out = jvp(lambda x: lax.sort(x), (x,), (t,))
    order = np.argsort(x)
    np.testing.assert_allclose(out, x[order])
    np.testing.assert_allclose(t_out, t[order])


@pytest.mark.parametrize("shape,k,largest", [((6,), 3, True), ((3, 5), 2, True),
                                              ((2, 3, 4), 4, False), ((4, 5), 0, True)])
def test_top_k_grads(shape, k, largest):
    check_grads(lambda x: lax.top_k(x, k, largest=largest)[0], (_x(shape, 8),), order=2,
                modes=("fwd", "rev"))


def test_top_k_grad_numpy():
    x = _x((2, 6), 9)
    g = grad(lambda x: lax.reduce_sum(lax.top_k(x, 2)[0], (0, 1)))(x)
    want = np.zeros_like(x)
    for r in range(2):
        want[r, np.argsort(-x[r])[:2]] = 1.0
    np.testing.assert_allclose(g, want)


# -- vmap ------------------------------------------------------------------------------------

@pytest.mark.parametrize("in_axis", [0, 1, 2])
@pytest.mark.parametrize("dim", [0, 1])
def test_sort_vmap(in_axis, dim):
    check_vmap(lambda x: lax.sort(x, dim), (_x((3, 4, 5), 10),), in_axes=in_axis)


@pytest.mark.parametrize("axes", [(0, 0), (1, None), (None, 2), (2, 1)])
def test_sort_multi_operand_vmap(axes):
    shapes = {None: (4, 5), 0: (3, 4, 5), 1: (4, 3, 5), 2: (4, 5, 3)}
    k, v = _x(shapes[axes[0]], 11), _x(shapes[axes[1]], 12)
    check_vmap(lambda k, v: lax.sort((k, v), 1, num_keys=1), (k, v), in_axes=axes)
    check_vmap(lambda k, v: lax.sort((k, v), 0, comparator=lambda a, b, c, d: lax.gt(c, d)),
               (k, v), in_axes=axes)


@pytest.mark.parametrize("in_axis", [0, 1, 2])
def test_top_k_vmap(in_axis):
    check_vmap(lambda x: lax.top_k(x, 3), (_x((3, 4, 5), 13),), in_axes=in_axis)


def test_sort_vmap_comparator_with_batched_captured_value():
    """A comparator that closes over a batched value: a loop over the batch."""
    k, v = _x((3, 5), 14), _x((3, 5), 15)
    signs = np.array([1.0, -1.0, 2.0])

    def f(k, v, s):
        return lax.sort((k, v), 0, comparator=lambda a, b, c, d: lax.lt(lax.mul(a, s),
                                                                         lax.mul(b, s)))
    check_vmap(f, (k, v, signs), (0, 0, 0))
    check_vmap(f, (k, v[0], signs), (0, None, 0))
