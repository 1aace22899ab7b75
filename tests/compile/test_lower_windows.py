"""Compiled windowed reductions (compile/lowering/windows.py) against their
reference semantics: reduce_window (variadic, non-commutative computations,
base and window dilation, low/high and negative padding, windows reaching
only padding), its shortcuts, select_and_scatter (a non-commutative scatter,
windows overlapping) and select_and_scatter_add, for each dtype family, with
inputs and intermediate values re-laid out, and 16-bit floats.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import functools

import numpy as np

import numxla.compile.lowering.reductions  # noqa: F401  (registers the lowerings)
import numxla.compile.lowering.windows  # noqa: F401
import numxla.primitives as lax
from numxla.compile import jit
from numxla.tracer.core import bf16_array

from . import util
from .util import check_all, relaid

rand = functools.partial(util.rand, rng=np.random.default_rng(11), bound=4)


def window_ops(xf, xi, xb, xc, src_f, src_i):
    """xf, xi, xb, xc: [5, 7]; src_f, src_i: [3, 4] (the windows of the select ops)."""
    return [
        lax.reduce_window_sum(xf, (2, 3), (1, 2), ((1, 0), (2, 1))),
        lax.reduce_window_max(xi, (2, 2), (2, 1), "SAME", (2, 1), (1, 2)),
        lax.reduce_window_min(xf, (3, 1), (1, 1), ((-1, 2), (0, 0)), (1, 3), (2, 1)),
        lax.reduce_window_sum(xc, (2, 2), (1, 1), "VALID"),
        lax.reduce_window_max(xb, (2, 2), (1, 3), ((3, 3), (0, 0))),  # windows of padding
        lax.reduce_window_sum(xb, (1, 3), (1, 1), ((0, 0), (1, 1))),
        lax.reduce_window((xf, xi), (np.float32(1), np.int32(0)),
                          lambda a, b: (a[0] * 0.5 + b[0], a[1] * 3 - b[1]),
                          (2, 3), (1, 2), ((1, 1), (0, 2)), (2, 1), (1, 2)),
        lax.reduce_window(xc, np.complex64(1), lambda a, b: a * (0.5 + 0.5j) + b,
                          (3, 2), (2, 1), ((0, 1), (1, 0))),
        lax.cumsum(xf, 1), lax.cummax(xi, 0, reverse=True), lax.cumprod(xi, 1),
        lax.select_and_scatter_add(src_f, xf, "ge", (2, 3), (2, 2), ((0, 1), (1, 1))),
        lax.select_and_scatter_add(src_i, xi, "le", (2, 3), (2, 2), ((0, 1), (1, 1))),
        lax.select_and_scatter(xi, lambda a, b: a > b, (2, 3), (2, 2), ((0, 1), (1, 1)),
                               src_i, np.int32(7), lambda a, b: a * 2 + b),
        lax.select_and_scatter(xf, lambda a, b: a <= b, (3, 3), (2, 2), ((1, 1), (1, 1)),
                               src_f, np.float32(-1), lambda a, b: a * 0.5 - b),
    ]


def args():
    xf = rand((5, 7), np.float32)
    xf[1, 2] = np.nan
    xf[3, :] = 2.0  # ties for the selects
    xi = rand((5, 7), np.int32)
    xb = rand((5, 7), np.bool_)
    xc = rand((5, 7), np.complex64)
    return xf, xi, xb, xc, rand((3, 4), np.float32), rand((3, 4), np.int32)


def test_windows_default_layout():
    a = args()
    check_all(jit(window_ops)(*a), window_ops(*a))


def relaid_window_ops(xf, xi, xb, xc, src_f, src_i):
    """Each primitive once, for the re-laid-out run."""
    return [
        lax.reduce_window_sum(xf, (2, 3), (1, 2), ((1, 0), (2, 1))),
        lax.reduce_window_max(xi, (2, 2), (2, 1), "SAME", (2, 1), (1, 2)),
        lax.reduce_window_min(xb, (3, 1), (1, 1), ((-1, 2), (0, 0)), (1, 3), (2, 1)),
        lax.reduce_window((xf, xi), (np.float32(1), np.int32(0)),
                          lambda a, b: (a[0] * 0.5 + b[0], a[1] * 3 - b[1]),
                          (2, 3), (1, 2), ((1, 1), (0, 2)), (2, 1), (1, 2)),
        lax.select_and_scatter_add(src_f, xf, "ge", (2, 3), (2, 2), ((0, 1), (1, 1))),
        lax.select_and_scatter(xi, lambda a, b: a > b, (2, 3), (2, 2), ((0, 1), (1, 1)),
                               src_i, np.int32(7), lambda a, b: a * 2 + b),
    ]


def test_windows_relaid():
    """Inputs and results in reversed, tiled, permuted, repeated-tile and padded layouts."""
    a = args()
    check_all(relaid(relaid_window_ops, a, 1)(*a), relaid_window_ops(*a))


def test_windows_sixteen_bit_and_empty():
    h = rand((4, 9), np.float16)
    b = bf16_array(rand((4, 9), np.float32))
    e = np.zeros((0, 3), np.float32)

    def f(h, b, e):
        pooled = lax.reduce_window_sum(h, (2, 3), (2, 3), "VALID")
        return [lax.reduce_window_sum(h, (2, 3), (1, 2)), lax.reduce_window_max(b, (2, 2), (1, 1)),
                lax.reduce_window(b, bf16_array(np.float32(1)), lax.max, (2, 2), (1, 2)),
                lax.select_and_scatter_add(pooled, h, "ge", (2, 3), (2, 3), "VALID"),
                lax.reduce_window_sum(e, (1, 2), (1, 1)),
                lax.reduce_window_max(e, (2, 2), (1, 1), ((1, 1), (0, 0)))]
    got, want = jit(f, in_layouts=("{0,1}", None, None))(h, b, e), f(h, b, e)
    check_all(got, want)
    check_all(got[3:4], want[3:4], exact=True)  # f32 sums, one rounding
