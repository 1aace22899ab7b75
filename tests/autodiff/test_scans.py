"""Cumulative reductions and ``associative_scan``: values against NumPy,
derivatives against closed forms and finite differences, and linear cost
(a cumulative window's derivative is a scan, not n windows of n elements)."""
from __future__ import annotations

import time

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import check_grads, grad, jvp
from numxla.autodiff.windows import SCAN_DERIVATIVE_MIN
from numxla.compile import jit


def _x(n, seed=0, shape=()):
    return np.random.default_rng(seed).uniform(0.5, 1.5, shape + (n,))


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 16])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_numpy(n, reverse):
    x = np.random.default_rng(n).standard_normal((2, n))
    acc = (lambda u: np.flip(u(np.flip(x, 1)), 1)) if reverse else (lambda u: u(x))
    total, running_max = lax.associative_scan(
        lambda a, b: (lax.add(a[0], b[0]), lax.max(a[1], b[1])), (x, x), reverse=reverse, axis=1)
    np.testing.assert_allclose(total, acc(lambda v: np.cumsum(v, 1)), rtol=1e-12)
    np.testing.assert_array_equal(running_max, acc(lambda v: np.maximum.accumulate(v, 1)))


def test_associative_scan_rejects_mismatched_extents():
    with pytest.raises(Exception, match="associative_scan.*extents"):
        lax.associative_scan(lambda a, b: a, (np.zeros(3), np.zeros(4)))


def test_cumlogsumexp_values_and_gradient():
    x = np.random.default_rng(1).standard_normal(9) * 30
    want = np.logaddexp.accumulate(x)
    np.testing.assert_allclose(lax.cumlogsumexp(x), want, rtol=1e-12)
    np.testing.assert_allclose(lax.cumlogsumexp(x, reverse=True),
                               np.flip(np.logaddexp.accumulate(np.flip(x))), rtol=1e-12)
    # d/dx_j sum_i y_i = sum_{i >= j} exp(x_j - y_i)
    closed = np.array([np.exp(x[j] - want[j:]).sum() for j in range(x.size)])
    np.testing.assert_allclose(grad(lambda v: lax.cumlogsumexp(v).sum())(x), closed, rtol=1e-10)
    edge = np.array([-np.inf, -np.inf, 0.0, np.inf, 1.0])
    np.testing.assert_array_equal(lax.cumlogsumexp(edge), [-np.inf, -np.inf, 0, np.inf, np.inf])


@pytest.mark.parametrize("reverse", [False, True])
def test_cumprod_gradient(reverse):
    x = _x(6, shape=(2,))
    y = np.cumprod(np.flip(x, 1), 1) if reverse else np.cumprod(x, 1)
    # d/dx_j sum_i prod_{k<=i} x_k = sum_{i >= j} y_i / x_j  (no zeros in x)
    if reverse:
        closed = np.flip(np.flip(np.cumsum(np.flip(y, 1), 1), 1) / np.flip(x, 1), 1)
    else:
        closed = np.flip(np.cumsum(np.flip(y, 1), 1), 1) / x
    fn = lambda v: lax.cumprod(v, axis=1, reverse=reverse).sum()
    np.testing.assert_allclose(grad(fn)(x), closed, rtol=1e-12)
    check_grads(lambda v: lax.cumprod(v, axis=1, reverse=reverse), (x,), order=2,
                modes=("fwd", "rev"))


def test_cumprod_gradient_with_a_zero_is_division_free():
    x = np.array([2.0, 0.0, 3.0, 4.0])
    # sum(cumprod) = 2 + 0 + ...: d/dx1 = 2 + 2*3 + 2*3*4 = 32, d/dx0 = 1, others 0
    np.testing.assert_allclose(grad(lambda v: lax.cumprod(v).sum())(x), [1, 32, 0, 0])


def test_cumprod_gradient_compiled():
    x = _x(5)
    g = jit(grad(lambda v: lax.cumprod(v).sum()), tiered=False)(x)
    np.testing.assert_allclose(np.asarray(g), np.flip(np.cumsum(np.flip(np.cumprod(x)))) / x,
                               rtol=1e-12)


@pytest.mark.parametrize("op, accumulate", [(lax.cummax, np.maximum.accumulate),
                                            (lax.cummin, np.minimum.accumulate)])
def test_long_cummax_gradient_is_a_scan(op, accumulate):
    n = max(SCAN_DERIVATIVE_MIN, 50_000)  # O(n^2): minutes; a scan: < 1 s
    x = np.random.default_rng(2).permutation(n).astype(np.float64)  # no ties
    ct = np.random.default_rng(3).standard_normal(n)
    start = time.perf_counter()
    got = grad(lambda v: (op(v) * ct).sum())(x)
    elapsed = time.perf_counter() - start
    # each output's cotangent lands on the element that is its running extreme
    running = accumulate(x)
    where = np.searchsorted(np.flatnonzero(x == running), np.arange(n), side="right") - 1
    want = np.bincount(np.flatnonzero(x == running)[where], weights=ct, minlength=n)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert elapsed < 5, f"{elapsed:.1f} s: the derivative is not linear"
    # forward mode agrees
    t = np.random.default_rng(4).standard_normal(n)
    _, tan = jvp(op, (x,), (t,))
    np.testing.assert_array_equal(tan, t[np.flatnonzero(x == running)[where]])


def test_no_family_module_shadows_a_function():
    # ``from . import <family>`` binds the module's name in ``lax``: a family
    # named like a function (``scan``) would replace ``lax.scan``
    exported = {name for family in lax._FAMILIES for name in family.__all__}
    assert all(callable(getattr(lax, name)) or not isinstance(getattr(lax, name), type(lax))
               for name in exported if name != "linalg")
    assert callable(lax.scan) and callable(lax.associative_scan)
