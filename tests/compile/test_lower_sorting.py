"""Compiled Sort and TopK (compile/lowering/sorting.py) against their reference
semantics, bit for bit: the default total order (NaNs of both signs last,
-0 before +0, infinities, complex by real then imaginary part), several
keys, stability, comparators inlined as scalar code (with a captured
scalar), every dimension, inputs and results in non-default layouts, and
16-bit floats.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import functools

import numpy as np

import numxla.compile.lowering.reductions  # noqa: F401  (registers the lowerings)
import numxla.compile.lowering.sorting  # noqa: F401
import numxla.primitives as lax
from numxla.compile import jit
from numxla.tracer.core import bf16_array

from . import util
from .util import check_all, relaid

rand = functools.partial(util.rand, rng=np.random.default_rng(11), bound=4)


def special(x):
    """Plant NaNs of both signs, signed zeros, infinities and ties."""
    x = x.copy()
    x[0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -np.nan]
    x[1, :4] = [0.0, -0.0, -0.0, 0.0]
    x[2, :] = 1.0
    x[3, 1] = -np.nan
    return x


def sorts(xf, xi, xb, xc, xd, xu, xn):
    """All [5, 7]; xn has no NaN (a comparator's order is undefined with
    NaNs: ``a > b`` is no strict weak order then, and results depend on the
    algorithm)."""
    return [
        lax.sort(xf, 1), lax.sort(xf, 0), lax.sort(xd, 1), lax.sort(xc, 1), lax.sort(xb, 0),
        lax.sort(xu, 1), lax.sort((xi, xf), 1, num_keys=1),
        lax.sort((xi, xb, xf, xc), 0, num_keys=2),
        lax.sort((xn, xi), 1, is_stable=False, comparator=lambda a, b, c, d: a > b),
        lax.sort((xi, xn), 0, comparator=lambda a, b, c, d: lax.select(a == b, c > d, a < b)),
        lax.sort(xi, 1, comparator=lambda a, b: lax.abs(a) < lax.abs(b)),
        lax.top_k(xf, 3), lax.top_k(xd, 7), lax.top_k(xi, 4), lax.top_k(xu, 2),
        lax.top_k(xb, 2), lax.top_k(xf, 0), lax.top_k(xf, 4, largest=False),
    ]


def args():
    xf = special(rand((5, 7), np.float32))
    xd = special(rand((5, 7), np.float64))
    xc = (rng_ints((5, 7)) + 1j * rng_ints((5, 7))).astype(np.complex64)
    xc[2, 2] = complex(np.nan, 1)
    xc[3, 3] = complex(1, np.nan)
    xn = np.where(np.isnan(xf), 0.0, xf).astype(np.float32)
    return (xf, rand((5, 7), np.int32), rand((5, 7), np.bool_), xc, xd,
            rand((5, 7), np.uint8), xn)


def rng_ints(shape):
    return np.random.default_rng(5).integers(-2, 2, shape)


def test_sorts_default_layout():
    a = args()
    check_all(jit(sorts)(*a), sorts(*a), exact=True)


def relaid_sorts(xf, xi, xb, xc, xd, xu, xn):
    """Each kind of sort once, for the re-laid-out run."""
    return [lax.sort(xf, 0), lax.sort((xi, xb, xc), 1, num_keys=2),
            lax.sort((xn, xi), 0, comparator=lambda a, b, c, d: a > b), lax.top_k(xd, 3)]


def test_sorts_relaid():
    """Inputs and results in reversed, tiled, permuted, repeated-tile and padded layouts."""
    a = args()
    check_all(relaid(relaid_sorts, a, 2)(*a), relaid_sorts(*a), exact=True)


def test_sorts_long_sixteen_bit_and_captured():
    x = rand((3, 300), np.float32)
    x[1, ::7] = np.nan
    h = rand((4, 33), np.float16)
    b = bf16_array(rand((4, 33), np.float32))
    keys = np.random.default_rng(1).integers(0, 5, (1000,)).astype(np.int64)
    vals = np.arange(1000, dtype=np.int32)

    def f(x, h, b, keys, vals):
        pivot = lax.reduce_max(keys, (0,))
        return [lax.sort(x, 1), lax.top_k(x, 17), lax.sort(h, 1), lax.sort((b, h), 0),
                lax.top_k(b, 5), lax.top_k(h, 33), lax.sort((keys, vals), 0),  # stability
                lax.sort((keys, vals), 0,
                         comparator=lambda a, b, c, d: (a == pivot) & (b != pivot))]
    a = (x, h, b, keys, vals)
    check_all(jit(f, in_layouts=("{0,1}", None, "{0,1}", None, None))(*a), f(*a), exact=True)
