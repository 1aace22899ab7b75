"""Producers fused into the windowed reductions (compile/lowering/windows.py
registers them as fusion consumers) and the one-pass moments of
BatchNormTraining (compile/lowering/batch_norm.py), against the reference
semantics: the same functions run un-jitted, op by op, on NumPy.  Relu fused
into max pools (NHWC, as in the CNN benchmark) with operands in default,
permuted, tiled and padded layouts; generic reduce_window and the select
ops with fused operands and padding; expensive producers stay buffers; and
batch norm on data the shifted one-pass variance must not lose (large means,
constant features, an outlying first element, infinities, NaN, empty)."""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import numxla.compile.lowering.batch_norm  # noqa: F401  (registers the lowerings)
import numxla.compile.lowering.windows  # noqa: F401
import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.compile import device_put, jit

from . import util
from .util import check_all, relaid

rng = np.random.default_rng(11)
rand = functools.partial(util.rand, rng=rng, bound=4)


def relu_pool(y):
    r = xnp.maximum(y, 0.0)
    return (lax.reduce_window(r, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
            lax.reduce_window_max(r, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"))


def nhwc(shape=(2, 6, 7, 5)):
    y = rng.standard_normal(shape).astype(np.float32)
    y[0, 1, 2, 3] = np.nan
    y[1, 4, 0, :] = -0.0
    y[1, 5, 6, 1] = np.inf
    return y


@pytest.mark.parametrize("layout", [None, "{0,1,2,3}", "{2,1,3,0}", "{3,2,1,0:T(2,4)}",
                                    "{0,3,1,2:T(2,2)(2,1)}"])
def test_relu_fuses_into_max_pools_in_every_layout(layout):
    y = nhwc()
    arg = y if layout is None else device_put(y, layout)
    compiled = jit(relu_pool, in_layouts=layout).lower(arg).compile()
    max_line = next(line for line in compiled.as_text().splitlines() if " max(" in line)
    assert "fused into %reduce_window" in max_line
    assert f"({y.size}, np.float32)" not in compiled.source  # no buffer for the relu
    for got, want in zip(compiled(arg), relu_pool(y)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))  # max is exact


def fused_window_ops(xf, xi, src_f, src_i):
    """xf, xi: [5, 7]; src_f, src_i: [3, 4]; every operand a fused expression."""
    a, b = xf * 2 - 1, xi + 3
    return [
        lax.reduce_window_sum(a, (2, 3), (1, 2), ((1, 0), (2, 1))),
        lax.reduce_window_min(xnp.minimum(xf, 0.5), (3, 1), (1, 1), ((-1, 2), (0, 0)),
                              (1, 3), (2, 1)),
        lax.reduce_window((a, b), (np.float32(1), np.int32(0)),
                          lambda p, q: (p[0] * 0.5 + q[0], p[1] * 3 - q[1]),
                          (2, 3), (1, 2), ((1, 1), (0, 2)), (2, 1), (1, 2)),
        lax.select_and_scatter_add(src_f * 3, xnp.maximum(xf, 0.0), "ge", (2, 3), (2, 2),
                                   ((0, 1), (1, 1))),
        lax.select_and_scatter(b, lambda p, q: p > q, (2, 3), (2, 2), ((0, 1), (1, 1)),
                               src_i - 1, np.int32(7), lambda p, q: p * 2 + q),
    ]


def window_args():
    xf = rand((5, 7), np.float32)
    xf[1, 2] = np.nan
    xf[3, :] = 2.0  # ties for the selects
    return xf, rand((5, 7), np.int32), rand((3, 4), np.float32), rand((3, 4), np.int32)


def test_fused_operands_of_every_window_op():
    a = window_args()
    compiled = jit(fused_window_ops).lower(*a).compile()
    text = compiled.as_text()
    for op in (" mul(", " add(", " minimum(", " max(", " sub("):
        for line in text.splitlines():
            if op in line and re.search(r"= [fs]32\[\d", line):  # not the computations
                assert "fused into" in line, line
    check_all(compiled(*a), fused_window_ops(*a))


def test_fused_operands_of_every_window_op_relaid():
    a = window_args()
    check_all(relaid(fused_window_ops, a, 2)(*a), fused_window_ops(*a))


def test_expensive_producers_are_not_recomputed_per_window():
    def f(y):
        return lax.reduce_window_max(xnp.exp(y), (2, 2), (1, 1), "VALID")
    y = rng.standard_normal((6, 5)).astype(np.float32)
    compiled = jit(f).lower(y).compile()
    exp_line = next(line for line in compiled.as_text().splitlines() if " exp(" in line)
    assert "fused" not in exp_line
    np.testing.assert_allclose(np.asarray(compiled(y)), np.asarray(f(y)), rtol=1e-6)


def bn(x, s, o):
    return lax.batch_norm_training(x, s, o, epsilon=1e-3, feature_index=1)


@pytest.mark.parametrize("layout", [None, "{0,1,2}", "{1,0,2:T(2,2)}"])
def test_batch_norm_moments_on_hard_data(layout):
    x = rng.standard_normal((9, 8, 11)).astype(np.float32)
    # a large mean, a small spread: quarters, so that the reference's f32 sums are exact
    x[:, 0] = np.round(x[:, 0] * 4) / 4 + 1.0e3
    x[:, 1] = 7.25                     # constant: variance exactly 0
    x[:, 2] *= 1e-3                    # tiny values
    x[0, 3, 0] = 1.0e3                 # the shift (first element) an outlier
    x[4, 4, 5] = np.inf                # infinite mean, NaN variance
    x[2, 5, 2] = np.nan
    x[1, 6, 3], x[7, 6, 9] = np.inf, -np.inf
    x[:, 7] = rng.standard_normal((9, 11)).astype(np.float32) * 1e3 - 5e2
    s = rng.standard_normal(8).astype(np.float32)
    o = rng.standard_normal(8).astype(np.float32)
    arg = x if layout is None else device_put(x, layout)
    got = jit(bn, in_layouts=(layout, None, None))(arg, s, o)
    with np.errstate(all="ignore"):
        want = bn(x, s, o)
    check_all(got, want, tol=1e-5)


def test_batch_norm_empty_and_sixteen_bit():
    s, o = np.ones(3, np.float32), np.zeros(3, np.float32)
    x = np.zeros((0, 3, 4), np.float32)
    check_all(jit(bn)(x, s, o), bn(x, s, o), tol=1e-5)
    h = (rng.standard_normal((4, 3, 5)) * 3 + 100).astype(np.float16)
    hs, ho = s.astype(np.float16), o.astype(np.float16)
    for g, w in zip(jit(bn)(h, hs, ho), bn(h, hs, ho)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g.astype(np.float32), w.astype(np.float32), rtol=3e-3,
                                   atol=3e-3)
