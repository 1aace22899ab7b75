"""Sort (multi-operand, comparator, stability, NaN order) and TopK: the
semantics document's worked examples, shape errors raised at trace time, and
property tests against independent NumPy formulations (stable argsort and
lexsort)."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.sorting import sort_p
from numxla.tracer import eval_graph, make_graph
from numxla.tracer.core import ShapeError, bf16_array, default_int
from numxla.tracer.shapes import bf16_to_f32

RNG = np.random.default_rng(7)


def run(f, *args):
    """Trace ``f`` into a graph and evaluate the graph on ``args``."""
    outs = eval_graph(make_graph(f)(*args), *args)
    return outs[0] if len(outs) == 1 else tuple(outs)


def traced_error(match, f, *args):
    with pytest.raises(ShapeError, match=match):
        make_graph(f)(*args)


def bits(x):
    return np.asarray(x).view(np.uint32)


# -- the document's worked examples ----------------------------------------------

def test_sort_document_three_operand_example():
    ops = (np.array([3, 1], np.int32), np.array([42, 50], np.int32),
           np.array([-3.0, 1.1], np.float32))

    def less_on_first(a0, b0, a1, b1, a2, b2):
        return lax.lt(a0, b0)
    out = run(lambda *ops: lax.sort(ops, 0, comparator=less_on_first), *ops)
    np.testing.assert_array_equal(out[0], [1, 3])
    np.testing.assert_array_equal(out[1], [50, 42])
    np.testing.assert_array_equal(out[2], np.array([1.1, -3.0], np.float32))


def test_sort_document_dimension_example():
    m = np.array([[5, 1, 4], [2, 6, 3]], np.int32)
    np.testing.assert_array_equal(lax.sort(m, dimension=0), [[2, 1, 3], [5, 6, 4]])  # columns
    np.testing.assert_array_equal(lax.sort(m, dimension=1), [[1, 4, 5], [2, 3, 6]])  # rows
    np.testing.assert_array_equal(lax.sort(m), [[1, 4, 5], [2, 3, 6]])  # the last by default


def test_sort_document_stability():
    # elements the comparator finds equal keep their order when is_stable
    keys = np.array([2, 1, 2, 1, 2], np.int32)
    tags = np.arange(5, dtype=np.int32)
    out = lax.sort((keys, tags), is_stable=True,
                   comparator=lambda k0, k1, t0, t1: lax.lt(k0, k1))
    np.testing.assert_array_equal(out[0], [1, 1, 2, 2, 2])
    np.testing.assert_array_equal(out[1], [1, 3, 0, 2, 4])


def test_top_k_document_rules():
    x = np.array([[1, 3, 3, 2], [5, 5, 5, 1]], np.int32)
    values, indices = run(lambda x: lax.top_k(x, 3), x)
    assert values.shape == indices.shape == (2, 3) and indices.dtype == np.int32
    np.testing.assert_array_equal(values, [[3, 3, 2], [5, 5, 5]])
    np.testing.assert_array_equal(indices, [[1, 2, 3], [0, 1, 2]])  # ties: lower index first
    values, indices = lax.top_k(np.array([4.0, 1.0, 3.0], np.float32), 2, largest=False)
    np.testing.assert_array_equal(values, [1.0, 3.0])
    np.testing.assert_array_equal(indices, [1, 2])


# -- semantics ----------------------------------------------------------------------

SPECIALS = np.array([np.nan, 1.0, -0.0, 0.0, -np.nan, -np.inf, 2.0, np.inf, -1.0, 0.0, -0.0],
                    np.float32)


def test_default_order_is_total_with_nans_last():
    out = run(lambda x: lax.sort(x), SPECIALS)
    np.testing.assert_array_equal(out[:9], [-np.inf, -1.0, -0.0, -0.0, 0.0, 0.0, 1.0, 2.0,
                                            np.inf])
    assert list(np.signbit(out[2:6])) == [True, True, False, False]  # -0 before +0
    assert np.isnan(out[9:]).all()
    # NaNs compare equal: they keep their order, whatever their sign
    assert list(bits(out[9:])) == [bits(SPECIALS[0]), bits(SPECIALS[4])]


def test_total_order_comparator_puts_negative_nan_first():
    out = lax.sort(SPECIALS, comparator=lax.lt_total_order)
    assert bits(out[0]) == bits(SPECIALS[4]) and bits(out[-1]) == bits(SPECIALS[0])
    np.testing.assert_array_equal(out[1:-1], lax.sort(SPECIALS)[:-2])


def test_top_k_uses_the_total_order():
    values, indices = lax.top_k(SPECIALS, 11)
    assert bits(values[0]) == bits(SPECIALS[0]) and bits(values[-1]) == bits(SPECIALS[4])
    np.testing.assert_array_equal(indices, [0, 7, 6, 1, 3, 9, 2, 10, 8, 5, 4])


def test_default_sort_of_complex_bool_and_multiple_keys():
    c = np.array([2 + 1j, 1 + 5j, 2 - 1j, 1 + 0j], np.complex64)
    np.testing.assert_array_equal(lax.sort(c), [1 + 0j, 1 + 5j, 2 - 1j, 2 + 1j])
    np.testing.assert_array_equal(lax.sort(np.array([True, False, True])), [False, True, True])
    a = np.array([1, 0, 1, 0, 1], np.int32)
    b = np.array([5.0, 2.0, 3.0, 9.0, 3.0], np.float32)
    tag = np.arange(5, dtype=np.uint8)
    out = lax.sort((a, b, tag), num_keys=2)
    np.testing.assert_array_equal(out[2], [1, 3, 2, 4, 0])
    np.testing.assert_array_equal(lax.sort((a, b, tag), num_keys=1)[2], [1, 3, 0, 2, 4])


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 8, 13, 31, 64, 100])
def test_comparator_sort_is_a_stable_sort(n):
    x = RNG.integers(0, 6, (3, n)).astype(np.int32)
    y = RNG.normal(size=(3, n)).astype(np.float32)
    # descending on x, ties in their original order
    got = run(lambda x, y: lax.sort((x, y), 1, comparator=lambda a, b, c, d: lax.gt(a, b)),
              x, y)
    order = np.argsort(-x, axis=1, kind="stable")
    np.testing.assert_array_equal(got[0], np.take_along_axis(x, order, 1))
    np.testing.assert_array_equal(got[1], np.take_along_axis(y, order, 1))


def test_comparator_over_two_keys_matches_lexsort():
    for _ in range(5):
        k0 = RNG.integers(0, 3, (4, 17)).astype(np.int8)
        k1 = RNG.integers(0, 3, (4, 17)).astype(np.uint16)

        def lexicographic(a0, b0, a1, b1):
            return lax.select(lax.eq(a0, b0), lax.lt(a1, b1), lax.lt(a0, b0))
        got = lax.sort((k0, k1), 0, comparator=lexicographic)
        order = np.lexsort((k1, k0), axis=0)
        np.testing.assert_array_equal(got[0], np.take_along_axis(k0, order, 0))
        np.testing.assert_array_equal(got[1], np.take_along_axis(k1, order, 0))
        got = lax.sort((k0, k1), 0, num_keys=2)  # the default comparator does the same
        np.testing.assert_array_equal(got[1], np.take_along_axis(k1, order, 0))


def test_comparator_may_close_over_traced_values():
    x = np.array([3.0, -1.0, 2.0, -4.0], np.float32)
    pivot = np.float32(0.0)
    graph = make_graph(lambda x, p: lax.sort(
        x, comparator=lambda a, b: lax.lt(lax.abs(lax.sub(a, p)), lax.abs(lax.sub(b, p)))))(
        x, pivot)
    np.testing.assert_array_equal(eval_graph(graph, x, pivot)[0], [-1.0, 2.0, 3.0, -4.0])


def test_top_k_matches_a_stable_descending_argsort():
    for _ in range(5):
        x = RNG.integers(-3, 4, (3, 4, 9)).astype(np.int64)
        k = int(RNG.integers(0, 10))
        values, indices = lax.top_k(x, k)
        order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
        np.testing.assert_array_equal(indices, order)
        np.testing.assert_array_equal(values, np.take_along_axis(x, order, -1))
    u = np.array([0, 255, 7, 255], np.uint8)
    np.testing.assert_array_equal(lax.top_k(u, 3)[1], [1, 3, 2])


def test_sort_and_top_k_of_bf16():
    b = bf16_array(np.array([1.5, -2.25, 3.0, -7.0], np.float32))
    np.testing.assert_array_equal(bf16_to_f32(lax.sort(b)), [-7.0, -2.25, 1.5, 3.0])
    values, indices = lax.top_k(b, 2)
    np.testing.assert_array_equal(bf16_to_f32(values), [3.0, 1.5])
    np.testing.assert_array_equal(indices, [2, 0])


def test_sort_key_val():
    keys = np.array([3, 1, 2], np.int32)
    vals = np.array([30.0, 10.0, 20.0], np.float32)
    k, v = lax.sort_key_val(keys, vals)
    np.testing.assert_array_equal(k, [1, 2, 3])
    np.testing.assert_array_equal(v, [10.0, 20.0, 30.0])


# -- shape errors at trace time ----------------------------------------------------------

X = np.zeros((2, 3), np.float32)


def test_sort_shape_errors():
    traced_error(r"sort: dimension 2 is out of range for rank 2", lambda x: lax.sort(x, 2), X)
    traced_error(r"sort: operands must have equal dimensions; operand 1 differs.*f32\[2,3\]",
                 lambda x, y: lax.sort((x, y)), X, X[0])
    traced_error(r"sort: num_keys 3 must be between 1 and the number of operands \(2\)",
                 lambda x: lax.sort((x, x), num_keys=3), X)
    traced_error(r"sort: comparator returns \(f32\) but must return scalars \(pred\)",
                 lambda x: lax.sort(x, comparator=lax.add), X)
    int_comparator = make_graph(lambda a, b: a < b)(np.int32(0), np.int32(0))
    traced_error(r"sort: comparator takes \(s32, s32\) but must take \(f32, f32\)",
                 lambda x: sort_p.bind(x, dimension=0, is_stable=True, num_keys=1,
                                       comparator=int_comparator), X)


def test_top_k_shape_errors():
    traced_error(r"top_k: k 4 must be between 0 and the size of the last dimension \(3\)",
                 lambda x: lax.top_k(x, 4), X)
    traced_error(r"top_k: operand must have rank >= 1", lambda x: lax.top_k(x, 1),
                 np.float32(1))
    traced_error(r"top_k: operand element type c64 is not allowed",
                 lambda x: lax.top_k(x, 1), np.zeros(3, np.complex64))


def test_every_op_traces_and_prints():
    text = make_graph(lambda x: (lax.sort(x), lax.sort((x, x), 0, num_keys=2),
                                 lax.sort(x, comparator=lax.gt), lax.top_k(x, 2)))(X).as_text()
    assert "sort(%x), dimension=1, is_stable=true, num_keys=1" in text
    assert "sort(%x, %x), dimension=0, is_stable=true, num_keys=2" in text
    assert "comparator=%gt" in text and "top_k(%x), k=2, largest=true" in text


# -- the NumPy layer ---------------------------------------------------------------------

def test_numpy_sort_and_argsort():
    x = RNG.integers(0, 5, (3, 6)).astype(np.float32)
    x[0, 2] = np.nan
    for axis in (-1, 0, None):
        np.testing.assert_array_equal(run(lambda x: xnp.sort(x, axis=axis), x),
                                      np.sort(x, axis=axis))
        np.testing.assert_array_equal(run(lambda x: xnp.argsort(x, axis=axis), x),
                                      np.argsort(x, axis=axis, kind="stable"))
    assert xnp.argsort(x).dtype == default_int().numpy_dtype  # JAX's default int (s64 with x64)


def test_numpy_cumulative():
    x = RNG.integers(-3, 4, (2, 5)).astype(np.int32)
    np.testing.assert_array_equal(xnp.cumsum(x), np.cumsum(x))
    np.testing.assert_array_equal(xnp.cumsum(x, axis=0), np.cumsum(x, axis=0))
    np.testing.assert_array_equal(xnp.cumprod(x, axis=1), np.cumprod(x, axis=1))
    np.testing.assert_array_equal(xnp.cumsum(x > 0, axis=1), np.cumsum(x > 0, axis=1))
    assert xnp.cumsum(x > 0).dtype == default_int().numpy_dtype  # JAX's default int (s64 with x64)
