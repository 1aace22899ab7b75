"""ReduceWindow (variadic, padding, base and window dilation), its shortcuts,
the cumulative reductions and SelectAndScatter: the semantics document's
worked examples (and XLA's own tests of them), shape errors raised at trace
time, and property tests against explicit loops over the window positions."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.tracer import eval_graph, make_graph
from numxla.tracer.core import ShapeError, bf16_array
from numxla.tracer.shapes import bf16_to_f32

RNG = np.random.default_rng(5)
F32_MAX = np.finfo(np.float32).max


def run(f, *args):
    """Trace ``f`` into a graph and evaluate the graph on ``args``."""
    outs = eval_graph(make_graph(f)(*args), *args)
    return outs[0] if len(outs) == 1 else outs


def traced_error(match, f, *args):
    with pytest.raises(ShapeError, match=match):
        make_graph(f)(*args)


# -- reference loops ---------------------------------------------------------------

def window_elements(shape, out_index, window, strides, padding, base, wdil):
    """The operand indices a window reads, row-major, skipping padding and holes."""
    for k in itertools.product(*(range(w) for w in window)):
        index = []
        for d, n in enumerate(shape):
            c = out_index[d] * strides[d] + k[d] * wdil[d] - padding[d][0]
            if c < 0 or c > (n - 1) * base[d] or c % base[d]:
                break
            index.append(c // base[d])
        else:
            yield tuple(index)


def out_shape(shape, window, strides, padding, base, wdil):
    dims = []
    for n, w, s, (lo, hi), b, wd in zip(shape, window, strides, padding, base, wdil):
        padded = lo + hi + ((n - 1) * b + 1 if n else 0)
        span = (w - 1) * wd + 1
        dims.append(max(0, (padded - span) // s + 1) if padded >= span else 0)
    return tuple(dims)


def reduce_window_loop(xs, inits, fn, window, strides, padding, base, wdil):
    shape = out_shape(xs[0].shape, window, strides, padding, base, wdil)
    outs = [np.empty(shape, x.dtype) for x in xs]
    for o in np.ndindex(*shape):
        acc = tuple(inits)
        for i in window_elements(xs[0].shape, o, window, strides, padding, base, wdil):
            acc = fn(acc, tuple(x[i] for x in xs))
        for out, a in zip(outs, acc):
            out[o] = a
    return outs


def select_and_scatter_loop(operand, source, init, select, scatter, window, strides, padding):
    ones = (1,) * operand.ndim
    out = np.full(operand.shape, init, operand.dtype)
    for w in np.ndindex(*source.shape):
        chosen = None
        for i in window_elements(operand.shape, w, window, strides, padding, ones, ones):
            if chosen is None or not select(operand[chosen], operand[i]):
                chosen = i
        if chosen is not None:
            out[chosen] = scatter(out[chosen], source[w])
    return out


def random_window(rng, shape):
    """Random window parameters (negative padding included) valid for ``shape``."""
    rank = len(shape)
    window = tuple(int(v) for v in rng.integers(1, 4, rank))
    strides = tuple(int(v) for v in rng.integers(1, 3, rank))
    base = tuple(int(v) for v in rng.integers(1, 3, rank))
    wdil = tuple(int(v) for v in rng.integers(1, 3, rank))
    padding = []
    for n, b, (lo, hi) in zip(shape, base, rng.integers(-1, 3, (rank, 2))):
        dilated = (n - 1) * b + 1 if n else 0
        padding.append((int(lo), int(hi)) if lo + hi + dilated >= 0 else (0, 0))
    return window, strides, tuple(padding), base, wdil


# -- the document's worked examples ------------------------------------------------

# The operand of the document's figures (ReduceWindow's 4x6 input with a 2x3
# window and stride, SelectAndScatter's figure 1); XLA's tests use it too.
GRID = np.array([[7, 2, 5, 3, 10, 2], [3, 8, 9, 3, 4, 2],
                 [1, 5, 7, 5, 6, 1], [0, 6, 2, 7, 2, 8]], np.float32)


def test_reduce_window_document_2x3_max_example():
    lowest = np.finfo(np.float32).min
    out = run(lambda x: lax.reduce_window(x, lowest, lax.max, (2, 3), (2, 3), "VALID"), GRID)
    np.testing.assert_array_equal(out, [[9, 10], [7, 8]])


def test_reduce_window_document_padding_example():
    x = np.array([10000, 1000, 100, 10, 1], np.float32)
    minimum = lambda a, b: lax.min(a, b)  # noqa: E731
    np.testing.assert_array_equal(lax.reduce_window(x, F32_MAX, minimum, (3,), (2,), "VALID"),
                                  [100, 1])
    np.testing.assert_array_equal(lax.reduce_window(x, F32_MAX, minimum, (3,), (2,), "SAME"),
                                  [1000, 10, 1])
    # "SAME" pads one MAX_VALUE on each side: explicitly
    np.testing.assert_array_equal(
        lax.reduce_window(x, F32_MAX, minimum, (3,), (2,), ((1, 1),)), [1000, 10, 1])


def test_select_and_scatter_document_figure_1():
    source = np.array([[2, 6], [3, 1]], np.float32)
    out = run(lambda x, s: lax.select_and_scatter(x, lax.ge, (2, 3), (2, 3), "VALID", s,
                                                  np.float32(0), lax.add), GRID, source)
    np.testing.assert_array_equal(out, [[0, 0, 0, 0, 6, 0], [0, 0, 2, 0, 0, 0],
                                        [0, 0, 3, 0, 0, 0], [0, 0, 0, 0, 0, 1]])


def test_select_and_scatter_document_figure_2_overlapping_windows():
    # 9 is selected by both top windows: the scatter adds 2 + 6 = 8 there
    operand = np.array([[7, 2, 5, 3, 8], [3, 8, 9, 3, 4],
                        [1, 5, 7, 5, 6], [0, 6, 2, 10, 2]], np.float32)
    source = np.array([[2, 6], [3, 1]], np.float32)
    out = lax.select_and_scatter(operand, lax.ge, (2, 3), (2, 2), "VALID", source,
                                 np.float32(0), lax.add)
    np.testing.assert_array_equal(out, [[0, 0, 0, 0, 0], [0, 0, 8, 0, 0],
                                        [0, 0, 3, 0, 0], [0, 0, 0, 1, 0]])


def test_select_and_scatter_xla_examples():
    # an init value that is not 0 stays where nothing is scattered
    out = lax.select_and_scatter(np.array([-1, 0, 6, 4, -4, 10], np.int32), lax.ge, (3,), (3,),
                                 "VALID", np.array([-10, 20], np.int32), np.int32(1), lax.add)
    np.testing.assert_array_equal(out, [1, 1, -9, 1, 1, 21])
    # ties go to the first element of the window (row-major), with SAME padding
    zeros = np.zeros((3, 3), np.float32)
    source = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    out = lax.select_and_scatter(zeros, lax.ge, (3, 3), (1, 1), "SAME", source, 0.0, lax.add)
    np.testing.assert_array_equal(out, [[12, 9, 0], [15, 9, 0], [0, 0, 0]])
    # negative low and positive high padding
    source = np.array([[2, 6, 4], [3, 1, 5]], np.float32)
    grid = GRID.copy()
    grid[0, 5] = 3
    out = lax.select_and_scatter(grid, lax.ge, (2, 2), (2, 2), ((0, 0), (-1, 1)), source, 0.0,
                                 lax.add)
    np.testing.assert_array_equal(out, [[0, 0, 0, 0, 6, 4], [0, 0, 2, 0, 0, 0],
                                        [0, 0, 3, 0, 0, 0], [0, 0, 0, 1, 0, 5]])
    # max as scatter
    out = lax.select_and_scatter(np.array([1, 2, 3, 100, 3, 2, 1], np.float32), lax.ge, (4,),
                                 (1,), "VALID", np.array([34, 42, 53, 19], np.float32), 0.0,
                                 lax.max)
    np.testing.assert_array_equal(out, [0, 0, 0, 53, 0, 0, 0])


# -- semantics -------------------------------------------------------------------------

def test_reduce_window_stablehlo_dilation_example():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    out = lax.reduce_window(x, np.int64(0), lambda a, b: a + b, (2, 1), (4, 1),
                            ((2, 1), (0, 0)), (2, 1), (3, 1))
    np.testing.assert_array_equal(out, [[0, 0], [3, 4]])


def test_init_value_takes_part_once_per_window_and_padding_is_skipped():
    x = np.array([1, 2, 3], np.int32)
    out = lax.reduce_window(x, np.int32(100), lambda a, b: a + b, (2,), (1,), ((1, 1),), (2,))
    # dilated base 1 _ 2 _ 3, padded: windows [p,1] [1,_] [_,2] [2,_] [_,3] [3,p]
    np.testing.assert_array_equal(out, [101, 101, 102, 102, 103, 103])


@pytest.mark.parametrize("seed", range(8))
def test_reduce_window_matches_a_loop_over_windows(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(v) for v in rng.integers(0, 5, rank))
    params = random_window(rng, shape)
    x = rng.integers(-9, 10, shape).astype(np.int32)
    comp = lambda a, b: a * 3 - b  # noqa: E731  (order-sensitive)
    got = run(lambda x: lax.reduce_window(x, np.int32(1), comp, *params), x)
    (want,) = reduce_window_loop([x], [1], lambda a, b: (a[0] * 3 - b[0],), *params)
    np.testing.assert_array_equal(got, want)
    for fn, py, init in ((lax.reduce_window_sum, lambda a, b: a + b, 0),
                         (lax.reduce_window_max, max, -2 ** 31),
                         (lax.reduce_window_min, min, 2 ** 31 - 1)):
        (want,) = reduce_window_loop([x], [init], lambda a, b: (py(a[0], b[0]),), *params)
        np.testing.assert_array_equal(fn(x, *params), want)


def test_variadic_reduce_window_max_with_its_position():
    x = RNG.integers(0, 5, (4, 5)).astype(np.float32)
    pos = np.arange(20, dtype=np.int32).reshape(4, 5)

    def comp(acc, new):  # larger value wins, then the smaller position
        (v, p), (w, q) = acc, new
        take = lax.select(lax.eq(w, v), lax.lt(q, p), lax.gt(w, v))
        return lax.select(take, w, v), lax.select(take, q, p)
    params = ((2, 3), (1, 2), ((1, 0), (0, 1)), (1, 1), (1, 1))
    got = run(lambda x, p: lax.reduce_window((x, p), (-np.inf, np.int32(99)), comp, *params),
              x, pos)

    def py(acc, new):
        return new if (new[0], -new[1]) > (acc[0], -acc[1]) else acc
    want = reduce_window_loop([x, pos], [-np.inf, 99], py, *params)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_padding_strings_follow_jax():
    x = np.arange(1, 5, dtype=np.int32)
    # a window of 4 over 4 elements: 3 padding elements, the odd one high (SAME) or low
    np.testing.assert_array_equal(lax.reduce_window_sum(x, (4,), None, "SAME"),
                                  lax.reduce_window_sum(x, (4,), None, ((1, 2),)))
    np.testing.assert_array_equal(lax.reduce_window_sum(x, (4,), None, "SAME_LOWER"),
                                  lax.reduce_window_sum(x, (4,), None, ((2, 1),)))
    np.testing.assert_array_equal(lax.reduce_window_sum(x, (4,), None, "same"), [6, 10, 9, 7])
    x = np.ones((5, 7), np.float32)
    for stride in (1, 2, 3):
        out = lax.reduce_window_sum(x, (3, 2), (stride, stride), "SAME")
        assert out.shape == (-(-5 // stride), -(-7 // stride))


def test_monoid_reduce_window_binds_the_shortcut():
    x = np.ones((4, 4), np.float32)
    for comp, init, name in ((lax.add, 0.0, "reduce_window_sum"),
                             (lax.max, -np.inf, "reduce_window_max"),
                             (lax.min, np.inf, "reduce_window_min")):
        text = make_graph(lambda x: lax.reduce_window(x, init, comp, (2, 2)))(x).as_text()
        assert f" {name}(" in text, name
    text = make_graph(lambda x: lax.reduce_window(x, 1.0, lax.add, (2, 2)))(x).as_text()
    assert " reduce_window(" in text


def test_cumulative_reductions():
    x = RNG.integers(-4, 5, (3, 6)).astype(np.int32)
    for axis in (0, 1, -1):
        np.testing.assert_array_equal(run(lambda x: lax.cumsum(x, axis), x),
                                      np.cumsum(x, axis))
        np.testing.assert_array_equal(lax.cumprod(x, axis), np.cumprod(x, axis))
        np.testing.assert_array_equal(lax.cummax(x, axis), np.maximum.accumulate(x, axis))
        np.testing.assert_array_equal(lax.cummin(x, axis), np.minimum.accumulate(x, axis))
        np.testing.assert_array_equal(lax.cumsum(x, axis, reverse=True),
                                      np.flip(np.cumsum(np.flip(x, axis), axis), axis))
    f = np.array([1.0, np.nan, 0.5], np.float32)
    np.testing.assert_array_equal(lax.cummax(f), [1.0, np.nan, np.nan])
    assert lax.cumsum(np.zeros((2, 0), np.float32), 1).shape == (2, 0)


def test_windows_on_half_precision():
    b = bf16_array(np.array([1.5, -2.25, 3.0, -7.0], np.float32))
    np.testing.assert_array_equal(bf16_to_f32(lax.cummax(b)), [1.5, 1.5, 3.0, 3.0])
    # each product rounds to bf16: 70.875 needs more than 8 significant bits
    np.testing.assert_array_equal(bf16_to_f32(lax.cumprod(b)), [1.5, -3.375, -10.125, 71.0])
    np.testing.assert_array_equal(bf16_to_f32(lax.reduce_window_sum(b, (2,))),
                                  [-0.75, 0.75, -4.0])
    out = lax.reduce_window(b, bf16_array(np.float32(-np.inf)), lambda a, c: lax.max(a, c),
                            (2,), (2,))
    np.testing.assert_array_equal(bf16_to_f32(out), [1.5, 3.0])
    h = np.full(3000, 1.0, np.float16)
    assert lax.reduce_window_sum(h, (3000,))[0] == 3000


@pytest.mark.parametrize("seed", range(6))
def test_select_and_scatter_matches_a_loop(seed):
    rng = np.random.default_rng(100 + seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(v) for v in rng.integers(1, 6, rank))
    window, strides, padding, _, _ = random_window(rng, shape)
    ones = (1,) * rank
    source_shape = out_shape(shape, window, strides, padding, ones, ones)
    operand = rng.integers(0, 4, shape).astype(np.float32)  # many ties
    source = rng.integers(1, 9, source_shape).astype(np.float32)
    for select, py_select in ((lax.ge, lambda a, b: a >= b), (lax.lt, lambda a, b: a < b)):
        got = run(lambda o, s: lax.select_and_scatter(o, select, window, strides, padding, s,
                                                      np.float32(0.5), lax.add), operand, source)
        want = select_and_scatter_loop(operand, source, 0.5, py_select, lambda a, b: a + b,
                                       window, strides, padding)
        np.testing.assert_array_equal(got, want)
    for prim, py_select in (("ge", lambda a, b: a >= b), ("le", lambda a, b: a <= b)):
        got = lax.select_and_scatter_add(source, operand, prim, window, strides, padding)
        want = select_and_scatter_loop(operand, source, 0, py_select, lambda a, b: a + b,
                                       window, strides, padding)
        np.testing.assert_array_equal(got, want)
    # a scatter that is not commutative shows the windows' order
    got = lax.select_and_scatter(operand, lax.ge, window, strides, padding, source,
                                 np.float32(1), lambda a, b: a * 2 + b)
    want = select_and_scatter_loop(operand, source, 1, lambda a, b: a >= b,
                                   lambda a, b: a * 2 + b, window, strides, padding)
    np.testing.assert_array_equal(got, want)


def test_select_and_scatter_add_accepts_lax_comparisons():
    source = np.array([[2, 6]], np.float32)
    operand = GRID[:2]
    out = lax.select_and_scatter_add(source, operand, lax.ge, (2, 3), (2, 3), "VALID")
    np.testing.assert_array_equal(out, [[0, 0, 0, 0, 6, 0], [0, 0, 2, 0, 0, 0]])
    out = lax.select_and_scatter_add(source, operand, lax.le, (2, 3), (2, 3), "VALID")
    np.testing.assert_array_equal(out, [[0, 2, 0, 0, 0, 6], [0, 0, 0, 0, 0, 0]])


def test_window_of_padding_only_selects_nothing():
    out = lax.select_and_scatter(np.array([5.0], np.float32), lax.ge, (1,), (1,), ((1, 1),),
                                 np.array([1.0, 2.0, 3.0], np.float32), np.float32(0), lax.add)
    np.testing.assert_array_equal(out, [2.0])


# -- shape errors at trace time ----------------------------------------------------------

X = np.zeros((4, 6), np.float32)


def test_reduce_window_shape_errors():
    traced_error(r"reduce_window: window_dimensions \(2,\) must have one entry per operand "
                 r"dimension \(rank 2\).*f32\[4,6\]",
                 lambda x: lax.reduce_window(x, 0.0, lambda a, b: a, (2,), (1,), ((0, 0),)), X)
    traced_error(r"reduce_window_sum: window_strides \(0, 1\) must be positive",
                 lambda x: lax.reduce_window_sum(x, (2, 2), (0, 1)), X)
    traced_error(r"reduce_window_max: padding \(-3, -3\) of dimension 0 removes more than",
                 lambda x: lax.reduce_window_max(x, (1, 1), None, ((-3, -3), (0, 0))), X)
    traced_error(r"reduce_window_min: base_dilation \(1, 0\) must be positive",
                 lambda x: lax.reduce_window_min(x, (1, 1), None, "VALID", (1, 0)), X)
    traced_error(r"reduce_window_sum: padding 'FULL' is not 'VALID', 'SAME' or 'SAME_LOWER'",
                 lambda x: lax.reduce_window_sum(x, (2, 2), None, "FULL"), X)
    traced_error(r"reduce_window: init_values\[0\] has element type s32, operand 0 has f32",
                 lambda x: lax.reduce_window(x, np.int32(0), lambda a, b: a, (2, 2)), X)
    traced_error(r"reduce_window: computation returns \(pred\) but must return scalars \(f32\)",
                 lambda x: lax.reduce_window(x, 0.0, lax.lt, (2, 2)), X)
    traced_error(r"reduce_window_max: operand element type c64 is not allowed",
                 lambda x: lax.reduce_window_max(x, (1,)), np.zeros(3, np.complex64))


def test_select_and_scatter_shape_errors():
    s = np.zeros((2, 2), np.float32)
    traced_error(r"select_and_scatter: source dimensions \(2, 2\) must be the window output "
                 r"dimensions \(3, 2\)",
                 lambda x, s: lax.select_and_scatter(x, lax.ge, (2, 3), (1, 3), "VALID", s, 0.0,
                                                     lax.add), X, s)
    traced_error(r"select_and_scatter: select returns \(f32\) but must return scalars \(pred\)",
                 lambda x, s: lax.select_and_scatter(x, lax.add, (2, 3), (2, 3), "VALID", s,
                                                     0.0, lax.add), X, s)
    traced_error(r"select_and_scatter: init_value must be a scalar of the operand's element type",
                 lambda x, s: lax.select_and_scatter(x, lax.ge, (2, 3), (2, 3), "VALID", s,
                                                     np.int32(0), lax.add), X, s)
    traced_error(r"select_and_scatter: source and operand must have the same element type",
                 lambda x, s: lax.select_and_scatter(x, lax.ge, (2, 3), (2, 3), "VALID", s,
                                                     0.0, lax.add), X, s.astype(np.float64))
    traced_error(r"select_and_scatter_add: select_prim 'gt' must be 'ge' or 'le'",
                 lambda s, x: lax.select_and_scatter_add(s, x, "gt", (2, 3), (2, 3), "VALID"),
                 s, X)
    traced_error(r"select_and_scatter_add: window_dimensions \(2, 3, 1\) must have one entry",
                 lambda s, x: lax.select_and_scatter_add(s, x, "ge", (2, 3, 1), (2, 3, 1),
                                                         ((0, 0),) * 3), s, X)


def test_every_op_traces_and_prints():
    s = np.zeros((2, 2), np.float32)
    text = make_graph(lambda x, s: (
        lax.reduce_window(x, 0.0, lambda a, b: a + b * b, (2, 3), (2, 3)),
        lax.reduce_window_sum(x, (2, 2)), lax.reduce_window_max(x, (2, 2), (2, 2), "SAME"),
        lax.reduce_window_min(x, (1, 2), None, ((1, 0), (0, 0)), (2, 1), (1, 2)),
        lax.cumsum(x, 1), lax.cumprod(x, 0),
        lax.select_and_scatter(x, lax.ge, (2, 3), (2, 3), "VALID", s, 0.0, lax.add),
        lax.select_and_scatter_add(s, x, "ge", (2, 3), (2, 3), "VALID")))(X, s).as_text()
    for name in ("reduce_window", "reduce_window_sum", "reduce_window_max",
                 "reduce_window_min", "select_and_scatter", "select_and_scatter_add"):
        assert f" {name}(" in text, name
    assert "window_dimensions={2,3}, window_strides={2,3}, padding={{0,0},{0,0}}" in text
    assert "select=%ge, scatter=%add" in text and "select_prim=ge" in text
