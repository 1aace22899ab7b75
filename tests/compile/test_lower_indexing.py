"""Compiled gather and scatter (compile/lowering/indexing.py) against their
reference semantics: full dimension numbers (batching dimensions, windows,
collapsed/inserted dimensions, the index vector dimension anywhere), XLA's
clamping for gather and skipped out-of-bounds windows for scatter, indices of
every integer type far out of range, repeated targets applied in order, the
update computation inlined (variadic, closing over a scalar), the named
scatters for every dtype family, and values in non-default layouts.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import functools

import numpy as np

import numxla.compile.lowering.indexing  # noqa: F401  (registers the lowerings)
import numxla.primitives as lax
from numxla.compile import device_put, jit
from numxla.tracer.core import bf16_array

from . import util
from .util import check_all, column_major, padded, relaid, repeated_tiles, tiled

rng = np.random.default_rng(11)
rand = functools.partial(util.rand, rng=rng)
assert_all_same = functools.partial(check_all, exact=True)  # bit for bit
LAYOUTS = [column_major, tiled, repeated_tiles, padded(1)]  # for relaid


G = lax.GatherDimensionNumbers
S = lax.ScatterDimensionNumbers


def gathers(x3, x4, table, i3, i4, rows):
    """x3: [3,4,2], x4: [2,3,4,2], table: [10,4]; i3: [2,3,2], i4: [2,2,3,2],
    rows: [5] (any integer type)."""
    return [
        # embedding lookup (implicit trailing index vector dimension)
        lax.gather(table, rows, G((1,), (0,), (0,)), (1, 4), index_vector_dim=1),
        # windows, index vector permuted onto the operand
        lax.gather(x3, i3, G((2, 3), (0,), (1, 0)), (1, 2, 2)),
        # batching dimensions
        lax.gather(x4, i4, G((3, 4), (1,), (2, 1), (0,), (1,)), (1, 1, 2, 2)),
        # offset dimensions first, the index vector dimension first
        lax.gather(x3, lax.transpose(i3, (2, 0, 1)), G((0, 1), (2,), (0, 1)), (2, 3, 1),
                   index_vector_dim=0),
        # a full-size window: every start clamps to 0
        lax.gather(x3, i3, G((2, 3, 4), (), (0, 2)), (3, 4, 2)),
        # no collapsed dimension, a window of size 1
        lax.gather(table, lax.reshape(rows, (5, 1)), G((1, 2), (), (1,)), (10, 1)),
        # a zero-size slice of a collapsed dimension: zeros
        lax.gather(x3, i3, G((2, 3), (0,), (1, 0)), (0, 2, 2)),
        # mode="fill": out-of-bounds slices read the fill value
        lax.gather(table, rows, G((1,), (0,), (0,)), (1, 3), index_vector_dim=1,
                   mode="fill", fill_value=-1),
    ]


def _gather_args(dtype, index_type, lo, hi):
    x3, x4, table = rand((3, 4, 2), dtype), rand((2, 3, 4, 2), dtype), rand((10, 4), dtype)
    if np.dtype(index_type).kind == "u":
        lo = 0
    info = np.iinfo(index_type)
    lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
    ints = lambda *shape: rng.integers(lo, hi + 1, shape).astype(index_type)  # noqa: E731
    rows = ints(5)
    rows[:2] = [info.min, info.max]
    return x3, x4, table, ints(2, 3, 2), ints(2, 2, 3, 2), rows


def test_gather_every_dimension_number_and_clamping():
    f = jit(gathers)
    for index_type, lo, hi in ((np.int32, -2, 12), (np.int32, -10 ** 9, 10 ** 9),
                               (np.int32, 0, 3)):
        args = _gather_args(np.float32, index_type, lo, hi)
        assert_all_same(f(*args), gathers(*args))


def test_gather_index_types_and_dtypes():
    cases = [(np.int8, np.int64), (np.uint8, np.bool_), (np.uint64, np.complex64),
             (np.int64, np.uint16)]

    def f(*args):
        out = []
        for i in range(len(cases)):
            x3, x4, table, i3, i4, rows = args[6 * i:6 * i + 6]
            out += [lax.gather(table, rows, G((1,), (0,), (0,)), (1, 4), index_vector_dim=1),
                    lax.gather(x4, i4, G((3, 4), (1,), (2, 1), (0,), (1,)), (1, 1, 2, 2))]
        return out

    for lo, hi in ((-3, 13), (-10 ** 12, 10 ** 12)):
        args = [a for d, t in cases for a in _gather_args(t, d, lo, hi)]
        assert_all_same(jit(f)(*args), f(*args))


def test_gather_in_non_default_layouts():
    args = _gather_args(np.float64, np.int64, -2, 12)
    assert_all_same(relaid(gathers, args, shift=1, layouts=LAYOUTS)(*args), gathers(*args))
    f = jit(gathers, in_layouts=("{0,2,1}", "{0,1,2,3:T(2,2)}", "{0,1}", None, None, None))
    put = (device_put(args[0], "{0,2,1}"),) + args[1:]
    assert_all_same(f(*put), gathers(*args))


WINDOW = S((2, 3), (0,), (1, 0))          # operand [3,4,2], indices [2,3,2], updates [2,3,2,2]
BATCHED = S((3, 4), (1,), (2, 1), (0,), (1,))  # operand [2,3,4,2], idx [2,2,3,2], upd [2,2,3,2,2]
ROWS = S((1,), (0,), (0,))                # operand [10,4], indices [7] (implicit), updates [7,4]


def scatters(x3, x4, table, i3, i4, rows, u3, u4, urows, c):
    """Every scatter flavour; ``c`` is a scalar the update computation closes over."""
    variadic = lax.scatter((x3, x3 * 2), i3, (u3, u3), WINDOW,
                           update_computation=lambda a0, a1, b0, b1: (b1 - a1, a0 + b0))
    return [
        lax.scatter(table, rows, urows, ROWS, index_vector_dim=1),          # replace
        lax.scatter_add(table, rows, urows, ROWS, index_vector_dim=1),
        lax.scatter_mul(x3, i3, u3, WINDOW),
        lax.scatter_min(x4, i4, u4, BATCHED),
        lax.scatter_max(table, rows, urows, ROWS, index_vector_dim=1),
        lax.scatter(x3, i3, u3, WINDOW, update_computation=lambda a, b: a * c - b),
        lax.scatter(x4, i4, u4, BATCHED, update_computation=lambda a, b: lax.max(a, b) + b),
        *variadic,
        lax.scatter_add(x3, i3, u3, WINDOW, mode="clip"),
        lax.scatter(x4, i4, u4, BATCHED),
        # windows of the full operand size: only start 0 fits
        lax.scatter_add(table, rows, lax.broadcast_in_dim(lax.slice(urows, (0, 0), (1, 4)),
                                                          (7, 1, 4), (1, 2)),
                        S((1, 2), (), (0,)), index_vector_dim=1),
    ]


def _scatter_args(dtype, index_type, lo, hi, repeats=True):
    x3, x4, table, i3, i4, rows = _gather_args(dtype, index_type, lo, hi)
    if rows.dtype == np.int64:
        # the reference's window check overflows for starts near the int64 maximum
        # (start + size wraps negative and the window is written); XLA skips it
        rows[1] = 2 ** 62
    rows = np.concatenate([rows, rows[2:4]])  # repeated targets: applied in order
    if not repeats:
        rows = rows[:5]
    u3, u4, urows = rand((2, 3, 2, 2), dtype), rand((2, 2, 3, 2, 2), dtype), \
        rand((len(rows), 4), dtype)
    return x3, x4, table, i3, i4, rows, u3, u4, urows, rand((), dtype)


def test_scatter_every_flavour_skips_out_of_bounds_windows():
    f = jit(scatters)
    for index_type, lo, hi in ((np.int32, -2, 12), (np.int32, -10 ** 9, 10 ** 9),
                               (np.int32, 0, 3)):
        args = _scatter_args(np.float64, index_type, lo, hi)
        assert_all_same(f(*args), scatters(*args))


def test_named_scatters_every_dtype_family_and_index_type():
    cases = [(np.int32, np.int8), (np.uint8, np.uint64), (np.bool_, np.int64),
             (np.complex128, np.uint8), (np.float32, np.int16)]

    def f(*args):
        out = []
        for i, (dtype, _) in enumerate(cases):
            table, rows, urows = args[3 * i:3 * i + 3]
            for fn in (lax.scatter_add, lax.scatter_mul, lax.scatter_min, lax.scatter_max):
                if fn in (lax.scatter_min, lax.scatter_max) and np.dtype(dtype).kind == "c":
                    continue
                out.append(fn(table, rows, urows, ROWS, index_vector_dim=1))
        return out

    for lo, hi in ((-3, 13), (0, 9)):
        args = []
        for dtype, index_type in cases:
            _, _, table, _, _, rows, _, _, urows, _ = _scatter_args(dtype, index_type, lo, hi)
            if np.dtype(dtype).kind in "iu":
                urows = urows * np.asarray(90, dtype)  # products and sums wrap around
            args += [table, rows, urows]
        assert_all_same(jit(f)(*args), f(*args))


def test_scatter_nan_and_16_bit_floats():
    table = rand((10, 4), np.float32)
    table[3, 1] = np.nan
    urows = rand((7, 4), np.float32)
    urows[0, 2] = np.nan
    rows = np.array([3, 3, 5, 1, 3, 9, -1], np.int32)
    h_words = np.array([0x7E01, 0xFC01, 0x3C00, 0x8001] * 10, np.uint16).reshape(10, 4)

    def f(table, rows, urows, h, uh, b, ub):
        return [lax.scatter_min(table, rows, urows, ROWS, index_vector_dim=1),
                lax.scatter_max(table, rows, urows, ROWS, index_vector_dim=1),
                lax.scatter(h, rows, uh, ROWS, index_vector_dim=1),
                lax.scatter_add(h, rows, uh, ROWS, index_vector_dim=1),
                lax.scatter_add(b, rows, ub, ROWS, index_vector_dim=1),
                lax.gather(h, rows, G((1,), (0,), (0,)), (1, 4), index_vector_dim=1)]

    h, uh = h_words.view(np.float16), rand((7, 4), np.float16)
    b, ub = bf16_array(rand((10, 4), np.float32)), bf16_array(rand((7, 4), np.float32))
    args = (table, rows, urows, h, uh, b, ub)
    got, want = jit(f, in_layouts=("{0,1}",) + (None,) * 6)(*args), f(*args)
    assert_all_same([np.asarray(g).view(np.uint32 if g.dtype.itemsize == 4 else np.uint16)
                     for g in got],
                    [np.asarray(w).view(np.uint32 if w.dtype.itemsize == 4 else np.uint16)
                     for w in want])


def test_scatter_in_non_default_layouts():
    args = _scatter_args(np.int64, np.int32, -2, 12)
    assert_all_same(relaid(scatters, args, shift=2, layouts=LAYOUTS)(*args), scatters(*args))
