"""Reduce (variadic, any computation), the shortcut reductions, argmax/argmin
and the NumPy layer's reductions: the semantics document's worked examples,
shape errors raised at trace time, and property tests against independent
formulations (Python folds over the reduced elements)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.special

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.primitives.reductions import reduce_sum_p
from numxla.tracer import eval_graph, make_graph
from numxla.tracer.core import ShapeError, bf16_array, default_int
from numxla.tracer.shapes import bf16_to_f32

RNG = np.random.default_rng(3)


def run(f, *args):
    """Trace ``f`` into a graph and evaluate the graph on ``args``."""
    outs = eval_graph(make_graph(f)(*args), *args)
    return outs[0] if len(outs) == 1 else outs


def traced_error(match, f, *args):
    with pytest.raises(ShapeError, match=match):
        make_graph(f)(*args)


def fold(x, dims, fn, init):
    """Reference: fold ``fn`` over the reduced elements of every result
    element in row-major order, with plain Python scalars."""
    kept = [d for d in range(x.ndim) if d not in dims]
    out = np.empty([x.shape[d] for d in kept], dtype=object)
    for r in np.ndindex(*out.shape):
        acc = init
        for k in itertools.product(*(range(x.shape[d]) for d in sorted(dims))):
            index = [0] * x.ndim
            for d, i in zip(kept, r):
                index[d] = i
            for d, i in zip(sorted(dims), k):
                index[d] = i
            acc = fn(acc, x[tuple(index)].item())
        out[r] = acc
    return out


def add(a, b):
    return lax.add(a, b)


# -- the document's worked examples ----------------------------------------------

def test_reduce_document_sum_of_a_vector():
    x = np.array([10, 11, 12, 13], np.int32)
    assert run(lambda x: lax.reduce(x, np.int32(0), add, (0,)), x) == 46


def test_reduce_applies_the_computation_sequentially_in_row_major_order():
    # f_0 = f(init, V_0), f_1 = f(f_0, V_1), ...: a computation that is neither
    # commutative nor associative shows the order.
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    out = lax.reduce(x, np.int64(7), lambda acc, v: acc * 10 + v, (0, 1))
    assert out == 7123456
    assert list(lax.reduce(x, np.int64(0), lambda acc, v: acc * 10 + v, (1,))) == [123, 456]


def test_reduce_document_2d_examples():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    np.testing.assert_array_equal(lax.reduce(x, np.float32(0), add, (0,)), [5, 7, 9])
    np.testing.assert_array_equal(lax.reduce(x, np.float32(0), add, (1,)), [6, 15])


def test_reduce_document_3d_examples():
    x = np.tile(np.array([[1, 2, 3], [4, 5, 6]], np.float32), (4, 1, 1))
    assert x.shape == (4, 2, 3)
    np.testing.assert_array_equal(run(lambda x: lax.reduce(x, 0.0, add, (0,)), x),
                                  [[4, 8, 12], [16, 20, 24]])
    np.testing.assert_array_equal(lax.reduce(x, 0.0, add, (2,)), [[6, 15]] * 4)
    np.testing.assert_array_equal(lax.reduce(x, 0.0, add, (0, 1)), [20, 28, 36])
    assert lax.reduce(x, 0.0, add, (0, 1, 2)) == 84


def doc_argmax(acc, x):
    """The document's f(max, argmax, value, index)."""
    (best, best_index), (value, index) = acc, x
    take = lax.ge(value, best)
    return lax.select(take, value, best), lax.select(take, index, best_index)


def test_reduce_document_argmax_example():
    v = np.array([2.0, 7.0, 1.0, 7.0, 3.0], np.float32)
    k = np.arange(5, dtype=np.int32)
    init = (np.float32(-np.inf), np.int32(-1))
    best, where = run(lambda v, k: lax.reduce((v, k), init, doc_argmax, (0,)), v, k)
    # value >= max takes the later of equal maxima, applied in order
    assert best == 7.0 and where == 3
    # over the rows of a matrix at once
    m = np.array([[1, 9, 9], [8, 2, 8]], np.float32)
    idx = np.broadcast_to(np.arange(3, dtype=np.int32), m.shape)
    best, where = lax.reduce((m, idx), init, doc_argmax, (1,))
    np.testing.assert_array_equal(best, [9, 8])
    np.testing.assert_array_equal(where, [2, 2])


def test_reduce_variadic_takes_and_returns_the_operands_pytree():
    x = np.array([[1, 5], [3, 2]], np.int32)
    out = lax.reduce({"lo": x, "hi": x}, {"lo": 100, "hi": -100},
                     lambda a, b: {"lo": lax.min(a["lo"], b["lo"]),
                                   "hi": lax.max(a["hi"], b["hi"])}, (0,))
    np.testing.assert_array_equal(out["lo"], [1, 2])
    np.testing.assert_array_equal(out["hi"], [3, 5])


# -- semantics ----------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(6))
def test_reduce_matches_a_python_fold(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(0, 4, rank))
    dims = tuple(sorted(rng.choice(rank, int(rng.integers(0, rank + 1)), replace=False)))
    x = rng.integers(-5, 6, shape).astype(np.int64)
    # a computation with a select and a multiply: evaluated on whole arrays
    comp = lambda a, b: lax.select(lax.gt(b, 0), a * 2 + b, a - b)  # noqa: E731
    got = run(lambda x: lax.reduce(x, np.int64(1), comp, dims), x)
    want = fold(x, dims, lambda a, b: a * 2 + b if b > 0 else a - b, 1)
    np.testing.assert_array_equal(got, want.astype(np.int64))


def test_reduce_with_a_computation_that_is_not_elementwise_runs_per_element():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def twice_plus(acc, v):  # rank-1 values inside: no whole-array evaluation
        return acc + lax.reduce_sum(lax.broadcast_in_dim(v, (2,), ()), (0,))
    np.testing.assert_array_equal(lax.reduce(x, np.float32(0), twice_plus, (1,)), [6, 24])


def test_reduce_computation_may_close_over_traced_values():
    x = np.array([[1, 2], [3, 4]], np.float32)
    scale = np.float32(10)
    graph = make_graph(lambda x, s: lax.reduce(x, 0.0, lambda a, b: a + b * s, (0,)))(x, scale)
    np.testing.assert_array_equal(eval_graph(graph, x, scale)[0], [40, 60])


def test_reduce_over_an_empty_dimension_gives_the_init_value():
    x = np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(lax.reduce(x, np.float32(5), lambda a, b: a * b, (0,)),
                                  [5, 5, 5])
    np.testing.assert_array_equal(lax.reduce_max(x, (0,)), [-np.inf] * 3)
    np.testing.assert_array_equal(lax.reduce_min(np.zeros((2, 0), np.int8), (1,)), [127, 127])


def test_reduce_with_a_monoid_binds_the_shortcut_like_jax():
    x = np.ones((2, 3), np.float32)
    text = make_graph(lambda x: lax.reduce(x, 0.0, lax.add, (1,)))(x).as_text()
    assert "reduce_sum(" in text and " reduce(" not in text
    text = make_graph(lambda x: lax.reduce(x, -np.inf, lax.max, (1,)))(x).as_text()
    assert "reduce_max(" in text
    # another init value is no identity: the general reduce, with the init value once
    text = make_graph(lambda x: lax.reduce(x, 1.0, lax.add, (1,)))(x).as_text()
    assert " reduce(" in text and "computation=%add" in text
    np.testing.assert_array_equal(lax.reduce(x, 1.0, lax.add, (1,)), [4, 4])


SHORTCUTS = [
    (lax.reduce_sum, lambda a, b: a + b, 0, np.int32),
    (lax.reduce_prod, lambda a, b: a * b, 1, np.int32),
    (lax.reduce_max, max, -2 ** 31, np.int32),
    (lax.reduce_min, min, 2 ** 31 - 1, np.int32),
    (lax.reduce_and, lambda a, b: a & b, -1, np.int32),
    (lax.reduce_or, lambda a, b: a | b, 0, np.int32),
    (lax.reduce_xor, lambda a, b: a ^ b, 0, np.int32),
]


@pytest.mark.parametrize("fn,py,init,dtype", SHORTCUTS, ids=[s[0].__name__ for s in SHORTCUTS])
def test_shortcut_reductions_match_a_python_fold(fn, py, init, dtype):
    for _ in range(4):
        rank = int(RNG.integers(1, 4))
        shape = tuple(int(s) for s in RNG.integers(1, 4, rank))
        dims = tuple(sorted(RNG.choice(rank, int(RNG.integers(1, rank + 1)), replace=False)))
        x = RNG.integers(-3, 4, shape).astype(dtype)
        got = run(lambda x: fn(x, dims), x)
        assert got.dtype == dtype
        want = fold(x, dims, py, init)
        np.testing.assert_array_equal(got, want.astype(np.int64).astype(dtype))


def test_shortcut_reductions_negative_axes_and_integer_wraparound():
    x = np.array([[100, 100], [-128, -1]], np.int8)
    np.testing.assert_array_equal(lax.reduce_sum(x, (-1,)), [-56, 127])
    np.testing.assert_array_equal(lax.reduce_prod(x, (1,)), [16, -128])


def test_shortcut_reductions_on_pred():
    p = np.array([[True, False], [False, False]])
    np.testing.assert_array_equal(lax.reduce_sum(p, (1,)), [True, False])   # add is or
    np.testing.assert_array_equal(lax.reduce_prod(p, (0,)), [False, False])  # mul is and
    np.testing.assert_array_equal(lax.reduce_and(p, (1,)), [False, False])
    np.testing.assert_array_equal(lax.reduce_or(p, (0,)), [True, False])
    np.testing.assert_array_equal(lax.reduce_xor(np.array([True, True, True]), (0,)), True)


def test_max_and_min_propagate_nan():
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, 2.0, -1.0]], np.float32)
    np.testing.assert_array_equal(lax.reduce_max(x, (1,)), [np.nan, 2.0])
    np.testing.assert_array_equal(lax.reduce_min(x, (1,)), [np.nan, -np.inf])


def test_argmax_argmin_first_index_and_nan_like_jax():
    x = np.array([[3, 7, 7, 1], [5, 5, 0, 0]], np.int32)
    np.testing.assert_array_equal(lax.argmax(x, 1, np.int32), [1, 0])
    np.testing.assert_array_equal(lax.argmin(x, 1, np.int32), [3, 2])
    np.testing.assert_array_equal(lax.argmax(x, 0, np.int64), [1, 0, 0, 0])
    assert lax.argmax(x, 0, np.int64).dtype == np.int64
    f = np.array([2.0, np.nan, 5.0, np.nan], np.float32)
    assert lax.argmax(f, 0, np.int32) == 1 and lax.argmin(f, 0, np.int32) == 1
    assert lax.argmax(np.array([-0.0, 0.0], np.float32), 0, np.int32) == 0  # -0 == +0


def test_argmax_matches_a_python_scan():
    for _ in range(5):
        x = RNG.integers(0, 4, (3, 5)).astype(np.float32)
        want = [max(range(5), key=lambda j: (row[j], -j)) for row in x]
        np.testing.assert_array_equal(run(lambda x: lax.argmax(x, 1, np.int32), x), want)


def test_half_precision_sums_round_once():
    x = np.full(4096, 1.0, np.float16)
    assert lax.reduce_sum(x, (0,)) == 4096  # an f16 accumulator would stop at 2048
    b = bf16_array(np.array([1.5, -2.25, 3.0, -7.0], np.float32))
    assert bf16_to_f32(lax.reduce_max(b, (0,))) == 3.0
    assert bf16_to_f32(lax.reduce_min(b, (0,))) == -7.0
    assert bf16_to_f32(lax.reduce_sum(b, (0,))) == -4.75
    assert lax.argmin(b, 0, np.int32) == 3
    assert bf16_to_f32(xnp.max(b)) == 3.0 and xnp.argmax(b) == 2
    # the general reduce runs its computation on bf16 values too
    out = lax.reduce(b, bf16_array(np.float32(0)), lambda a, c: lax.add(a, c), (0,))
    assert bf16_to_f32(out) == -4.75


# -- shape errors at trace time ----------------------------------------------------------

X = np.zeros((2, 3), np.float32)
I = np.zeros((2, 3), np.int32)


def test_reduce_shape_errors():
    traced_error(r"reduce: dimension 2 is out of range for rank 2",
                 lambda x: lax.reduce(x, 0.0, add, (2,)), X)
    traced_error(r"reduce_sum: dimensions \(1, 1\) contain a repeated dimension",
                 lambda x: reduce_sum_p.bind(x, axes=(1, 1)), X)
    traced_error(r"reduce: operands must have equal dimensions.*f32\[2,3\].*s32\[3\]",
                 lambda x, y: lax.reduce((x, y), (0.0, 0), lambda a, b: a, (0,)), X, I[0])
    traced_error(r"reduce: init_values\[0\] has element type s32, operand 0 has f32",
                 lambda x: lax.reduce(x, np.int32(0), lambda a, b: a, (0,)), X)
    traced_error(r"reduce: init_values\[0\] must be a scalar",
                 lambda x: lax.reduce(x, x[0], lambda a, b: a, (0,)), X)
    traced_error(r"reduce: computation returns \(s32\) but must return scalars \(f32\)",
                 lambda x: lax.reduce(x, 0.0, lambda a, b: np.int32(1), (0,)), X)
    traced_error(r"reduce: computation returns 1 values for 2 operands",
                 lambda x, y: lax.reduce((x, y), (0.0, 0), lambda a, b: a[0], (0,)), X, I)
    traced_error(r"reduce: init_values must have the structure of operands",
                 lambda x, y: lax.reduce((x, y), 0.0, lambda a, b: a, (0,)), X, I)


def test_shortcut_and_arg_shape_errors():
    c = np.zeros(3, np.complex64)
    traced_error(r"reduce_max: operand element type c64 is not allowed",
                 lambda x: lax.reduce_max(x, (0,)), c)
    traced_error(r"reduce_and: operand element type f32 is not allowed",
                 lambda x: lax.reduce_and(x, (0,)), X)
    traced_error(r"reduce_prod: dimension -3 is out of range for rank 2",
                 lambda x: lax.reduce_prod(x, (-3,)), X)
    traced_error(r"argmax: the reduced dimension 1 must not be empty",
                 lambda x: lax.argmax(x, 1, np.int32), np.zeros((2, 0), np.float32))
    traced_error(r"argmin: index_dtype must be an integer type",
                 lambda x: lax.argmin(x, 0, np.float32), X)
    traced_error(r"argmax: dimension 5 is out of range for rank 2",
                 lambda x: lax.argmax(x, 5, np.int32), X)


def test_every_op_traces_and_prints():
    text = make_graph(lambda x, i: (
        lax.reduce(x, 0.0, lambda a, b: a + 2 * b, (0,)), lax.reduce_sum(x, (0,)),
        lax.reduce_prod(x, (1,)), lax.reduce_max(x, (0,)), lax.reduce_min(x, (1,)),
        lax.reduce_and(i, (0,)), lax.reduce_or(i, (1,)), lax.reduce_xor(i, (0,)),
        lax.argmax(x, 1, np.int32), lax.argmin(x, 0, np.int32)))(X, I).as_text()
    for name in ("reduce", "reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                 "reduce_and", "reduce_or", "reduce_xor", "argmax", "argmin"):
        assert f" {name}(" in text, name
    assert "computation=%region" in text and "axes={1}, index_dtype=" in text


# -- the NumPy layer ---------------------------------------------------------------------

def test_numpy_reductions_match_numpy():
    x = RNG.normal(size=(3, 4, 2)).astype(np.float32)
    for ours, theirs in ((xnp.max, np.max), (xnp.amin, np.amin), (xnp.prod, np.prod)):
        for axis in (None, 0, -1, (0, 2)):
            for keepdims in (False, True):
                got = run(lambda x: ours(x, axis=axis, keepdims=keepdims), x)
                np.testing.assert_allclose(got, theirs(x, axis=axis, keepdims=keepdims),
                                           rtol=1e-6)
    b = x > 0
    np.testing.assert_array_equal(run(lambda b: xnp.any(b, axis=1), b), np.any(b, axis=1))
    np.testing.assert_array_equal(run(lambda b: xnp.all(b, keepdims=True), b),
                                  np.all(b, keepdims=True))
    np.testing.assert_array_equal(xnp.all(np.array([2, 0, 1])), False)  # x != 0
    assert xnp.prod(np.array([True, True])).dtype == default_int().numpy_dtype  # (s64 with x64)


def test_numpy_argmax_argmin():
    x = RNG.integers(0, 5, (4, 5)).astype(np.float32)
    assert run(lambda x: xnp.argmax(x), x) == np.argmax(x)
    np.testing.assert_array_equal(run(lambda x: xnp.argmin(x, axis=0), x), np.argmin(x, 0))
    np.testing.assert_array_equal(xnp.argmax(x, axis=-1, keepdims=True),
                                  np.argmax(x, -1, keepdims=True))
    assert xnp.argmax(x).dtype == default_int().numpy_dtype  # JAX's default int (s64 with x64)
    assert xnp.argmax(np.array([1, 3, 2])) == 1
    assert xnp.max(np.array([[1, 5], [4, 2]]), axis=0).tolist() == [4, 5]
    for fn in (xnp.argmax, xnp.max):       # lists are refused, as JAX's reductions refuse them
        with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
            fn([1, 3, 2])


def test_numpy_logsumexp_var_std():
    x = RNG.normal(size=(3, 5)).astype(np.float32)
    np.testing.assert_allclose(xnp.logsumexp(x, axis=1), scipy.special.logsumexp(x, axis=1),
                               rtol=1e-5)
    np.testing.assert_allclose(xnp.logsumexp(x, keepdims=True),
                               scipy.special.logsumexp(x, keepdims=True), rtol=1e-5)
    inf = np.array([-np.inf, -np.inf], np.float32)
    assert xnp.logsumexp(inf) == -np.inf
    assert xnp.logsumexp(np.array([np.inf, 1.0], np.float32)) == np.inf
    np.testing.assert_allclose(xnp.var(x, axis=0), np.var(x, axis=0), rtol=1e-5)
    np.testing.assert_allclose(xnp.std(x, ddof=1), np.std(x, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(xnp.var(np.arange(4)), np.var(np.arange(4)))


def test_numpy_array_methods():
    x = np.array([[1.0, 4.0, 2.0], [3.0, 0.0, 5.0]], np.float32)
    outs = run(lambda x: (x.max(), x.min(0), x.prod(1), x.argmax(), x.argmin(axis=1),
                          (x > 2).any(0), (x > 0).all(), x.std(1), x.cumsum(1),
                          x.argsort()), x)
    want = (x.max(), x.min(0), x.prod(1), x.argmax(), x.argmin(1), (x > 2).any(0),
            (x > 0).all(), x.std(1), x.cumsum(1), x.argsort())
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got, w, rtol=1e-6)
