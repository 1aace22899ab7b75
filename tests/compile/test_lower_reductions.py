"""Compiled reductions (compile/lowering/reductions.py) against their reference
semantics: reduce (variadic, non-commutative computations applied in the
reference's order, captured scalars), the shortcut reductions and
argmax/argmin (NaN and tie rules), for each dtype family, with inputs and
every intermediate value re-laid out (reversed, permuted, tiled, repeated
tiles, padded), and 16-bit floats.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import numxla.compile.lowering.reductions  # noqa: F401  (registers the lowerings)
import numxla.primitives as lax
from numxla.compile import jit
from numxla.tracer.core import bf16_array

from . import util
from .util import check_all, relaid

rng = np.random.default_rng(11)
rand = functools.partial(util.rand, rng=rng, bound=4)


# --------------------------------------------------------------------------

def shortcuts(xf, xi, xu, xb, xc, xd):
    """Every shortcut reduction, every dtype family, several axis sets."""
    out = []
    for axes in ((0, 2), (1,)):
        out += [lax.reduce_sum(xf, axes), lax.reduce_max(xf, axes), lax.reduce_min(xd, axes),
                lax.reduce_prod(xi, axes), lax.reduce_and(xi, axes), lax.reduce_or(xu, axes),
                lax.reduce_xor(xu, axes), lax.reduce_sum(xc, axes)]
    out += [lax.reduce_max(xb, (1,)), lax.reduce_min(xb, (0, 2)), lax.reduce_sum(xb, (2,)),
            lax.reduce_prod(xb, (0,)), lax.reduce_xor(xb, (1,)), lax.reduce_prod(xc, (2,)),
            lax.reduce_max(xi, (0, 1, 2)), lax.reduce_min(xu, (2,)), lax.reduce_sum(xf, ())]
    return out


def arg_reductions(xf, xi, xu, xb, xc, xd):
    """The first extreme index, the first NaN if any, along each axis."""
    return [lax.argmax(xf, 0), lax.argmin(xf, 1, np.int64), lax.argmax(xf, 2),
            lax.argmin(xd, 0), lax.argmax(xd, 2), lax.argmax(xi, 1), lax.argmin(xi, 2),
            lax.argmin(xu, 0, np.uint8), lax.argmax(xb, 2)]


def general_reduces(xf, xi, xu, xb, xc, xd):
    """Reduce with computations that are neither commutative nor monoids, so
    that the order of application shows; variadic; a captured scalar."""
    scale = lax.reduce_max(xf, (0, 1, 2))  # captured by a computation
    return [
        lax.reduce(xf, np.float32(1), lambda a, x: a * 0.5 + x, (1,)),
        lax.reduce(xi, np.int32(3), lambda a, x: a * 3 - x, (0, 2)),
        lax.reduce(xu, np.uint8(7), lambda a, x: a * 5 + x, (0, 1, 2)),
        lax.reduce((xf, xi), (np.float32(0), np.int32(0)),
                   lambda a, x: (a[0] * 0.25 + x[0] * scale, a[1] * 2 + x[1]), (0, 2)),
        lax.reduce(xc, np.complex64(1j), lambda a, x: a * (0.5 + 0.25j) + x, (2,)),
        lax.reduce(xb, True, lambda a, x: lax.select(a, x, ~x), (1,)),
        lax.reduce(xd, 0.0, lambda a, x: lax.max(a, x), (0,)),
        lax.reduce(xf, np.float32(2), lax.add, (2,)),        # init not the identity
        lax.reduce(xd, np.float64(0), lambda a, x: a - x, ()),
    ]


def relaid_ops(xf, xi, xu, xb, xc, xd):
    """Each primitive once, for the re-laid-out runs."""
    return [lax.reduce_sum(xf, (0, 2)), lax.reduce_max(xf, (1,)), lax.reduce_min(xi, (0,)),
            lax.reduce_prod(xc, (2,)), lax.reduce_and(xb, (1, 2)), lax.reduce_or(xu, (0, 1)),
            lax.reduce_xor(xi, (2,)), lax.argmax(xf, 0), lax.argmin(xd, 2),
            lax.reduce(xi, np.int32(3), lambda a, x: a * 3 - x, (0, 2)),
            lax.reduce((xf, xi), (np.float32(0), np.int32(0)),
                       lambda a, x: (a[0] * 0.25 + x[0], a[1] * 2 + x[1]), (0, 2))]


def args():
    xf = rand((3, 4, 5), np.float32)
    xf[1, 2, 3] = np.nan
    xf[2, 0, :] = 1.0  # ties
    xd = rand((3, 4, 5), np.float64)
    xd[0, 1, 2] = -np.nan
    xd[0, 3, 1] = np.nan
    xi = rand((3, 4, 5), np.int32)
    xu = rand((3, 4, 5), np.uint8)
    xb = rand((3, 4, 5), np.bool_)
    xc = rand((3, 4, 5), np.complex64)
    return xf, xi, xu, xb, xc, xd


def everything(*a):
    return [shortcuts(*a), arg_reductions(*a), general_reduces(*a)]


def test_reductions_default_layout():
    a = args()
    check_all(jit(everything)(*a), everything(*a))


def test_reductions_relaid():
    """Inputs and results in reversed, tiled, permuted, repeated-tile and padded layouts."""
    a = args()
    check_all(relaid(relaid_ops, a)(*a), relaid_ops(*a))


def test_long_reductions_lanes():
    """Float sums and maxima split into lanes (a long minor dimension, a
    tail), in row- and column-major layouts; integer sums wrap."""
    x = rand((6, 333), np.float32)
    x[2, 100] = np.nan
    xd = rand((333, 4), np.float64)
    xi = rng.integers(-2 ** 31, 2 ** 31 - 1, (7, 300)).astype(np.int32)

    def f(x, xt, xd, xi):
        return [lax.reduce_sum(x, (1,)), lax.reduce_max(x, (1,)), lax.reduce_min(xt, (0, 1)),
                lax.reduce_prod(x * 0 + 1.001, (1,)), lax.reduce_sum(xt, (1,)),
                lax.reduce_sum(xd, (0,)), lax.reduce_max(xd, (0,)), lax.reduce_sum(xi, (1,)),
                lax.argmax(xt, 1)]
    a = (x, x, xd, xi)
    check_all(jit(f, in_layouts=(None, "{0,1}", "{0,1}", None))(*a), f(*a))


def test_sixteen_bit_floats_and_empty():
    h = rand((4, 150), np.float16)
    h[1, 3] = np.nan
    b = bf16_array(rand((4, 150), np.float32))
    e = np.zeros((0, 3), np.float32)

    def f(h, b, e):
        return [lax.reduce_sum(h, (1,)), lax.reduce_sum(b, (0,)), lax.reduce_max(b, (1,)),
                lax.reduce_prod(h, (0,)), lax.argmax(h, 1), lax.argmin(b, 0),
                lax.reduce_sum(e, (0,)), lax.reduce_max(e, (1,)), lax.argmax(e, 1),
                lax.reduce(e, np.float32(3), lambda a, x: a * x, (0,))]
    got, want = jit(f, in_layouts=("{0,1}", None, None))(h, b, e), f(h, b, e)
    check_all(got, want)


def test_large_reductions_on_threads():
    """Reductions of >= 2^21 elements split a kept dimension into prange
    chunks: along the contiguous dimension (lanes per thread) and across it
    (accumulating column blocks), with fused producers, a reduced-dimension
    tail, in default, column-major and tiled layouts."""
    x = rng.random((1026, 2048), dtype=np.float32) + 0.5
    x[5, 7] = np.nan
    xi = rng.integers(-2 ** 31, 2 ** 31 - 1, (1024, 2048)).astype(np.int32)

    def f(x, xi):
        y = x * x + 1.0  # fused into the reductions
        return [lax.reduce_sum(y, (1,)), lax.reduce_sum(y, (0,)), lax.reduce_max(x, (1,)),
                lax.reduce_min(x, (0,)), lax.reduce_sum(xi, (0,)), lax.reduce_sum(xi, (1,))]
    a = (x, xi)
    want = f(*a)
    for layouts in (None, ("{0,1}", "{0,1}")):
        compiled = jit(f, in_layouts=layouts).lower(*a).compile()
        assert "prange(" in compiled.source
        check_all(compiled(*a), want)
    for shift in (1, 3):  # tiled layouts
        compiled = relaid(f, a, shift)
        assert "prange(" in compiled.source
        check_all(compiled(*a), want)
    small = jit(lambda x: lax.reduce_sum(x, (1,))).lower(x[:64]).compile()
    assert "prange(" not in small.source


@pytest.mark.parametrize("shape, axes", [((4, 0), (1,)), ((0, 4), (0,)), ((3, 0, 2), (1,)),
                                         ((0, 3), (0, 1))])
def test_reduce_over_no_elements_gives_the_init_passed_as_an_argument(shape, axes):
    """Issue 13, item 5: the init value an argument (not a constant), the
    reduced dimensions empty: every result is the init (was uninitialised memory)."""
    def f(x, init):
        return lax.reduce(x, init, lax.add, axes)
    x = np.zeros(shape, np.float32)
    want = np.full([n for d, n in enumerate(shape) if d not in axes], 3, np.float32)
    got = jit(f, tiered=False)(x, np.float32(3))
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(f(x, np.float32(3))), want)  # the reference
