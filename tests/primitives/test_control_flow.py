"""Control flow: while_loop, fori_loop, cond/switch/conditional, scan, call,
XLA's map and map_sequential.  Oracles are plain Python loops and NumPy."""
from __future__ import annotations

import re

import numpy as np
import pytest

import numxla.primitives as lax
from tests.conformance.harness import check_results, load_cases, load_mappings
from tests.conformance.ops_control_flow import run_case_locally
from numxla.tracer import eval_graph, make_graph, pytree
from numxla.tracer.core import ShapeError

load_mappings()
rng = np.random.default_rng(0)


def traced(fn):
    """``fn`` traced with make_graph, then the graph evaluated on the same arguments."""
    def run(*args):
        graph = make_graph(fn)(*args)
        return graph.out_tree.unflatten(eval_graph(graph, *pytree.tree_leaves(args)))
    return run


# --------------------------------------------------------------------------
# the semantics document's While example, and StableHLO's
# --------------------------------------------------------------------------

CONSTANT_VECTOR = np.arange(10, dtype=np.float32)


def test_while_document_example_with_a_pytree_carry():
    # T = (int32 count, float[10] accumulator); 1000 iterations add a constant vector.
    def cond(result):
        return lax.lt(result[0], 1000)

    def body(result):
        return lax.add(result[0], 1), lax.add(result[1], CONSTANT_VECTOR)

    init = (np.int32(0), np.zeros(10, np.float32))
    for run in (lambda i: lax.while_loop(cond, body, i),
                traced(lambda i: lax.while_loop(cond, body, i))):
        count, acc = run(init)
        assert count == 1000 and np.asarray(count).dtype == np.int32
        np.testing.assert_array_equal(acc, 1000 * CONSTANT_VECTOR)


def test_while_document_example_with_an_xla_tuple_carry():
    gte = lax.get_tuple_element

    def cond(t):
        return lax.lt(gte(t, 0), 1000)

    def body(t):
        return lax.tuple([lax.add(gte(t, 0), 1), lax.add(gte(t, 1), CONSTANT_VECTOR)])

    result = lax.while_loop(cond, body, lax.tuple([np.int32(0), np.zeros(10, np.float32)]))
    assert isinstance(result, lax.TupleValue)
    assert result[0] == 1000
    np.testing.assert_array_equal(result[1], 1000 * CONSTANT_VECTOR)
    text = make_graph(lambda v: lax.while_loop(cond, body, lax.tuple([np.int32(0), v])))(
        np.zeros(10, np.float32)).as_text()
    assert "%while_body (p0: (s32[], f32[10]{0})) -> ((s32[], f32[10]{0}))" in text
    assert re.search(r"\(\(s32\[\], f32\[10\]\{0\}\)\) while\(%tuple\.\d+\)", text)


def test_stablehlo_spec_while_example_with_its_errata():
    # spec.md: init_i = 1, init_sum = 0, while i < 10 {i += 1; sum += 1}.  The spec
    # prints sum = 10, but the body runs 9 times: the conformance data corrects it to 9.
    one, ten = np.int64(1), np.int64(10)
    i, total = lax.while_loop(lambda c: lax.lt(c[0], ten),
                              lambda c: (lax.add(c[0], one), lax.add(c[1], one)),
                              (np.int64(1), np.int64(0)))
    assert (int(i), int(total)) == (10, 9)


def test_while_runs_zero_times_when_the_condition_starts_false():
    assert lax.while_loop(lambda c: lax.lt(c, 0), lambda c: lax.add(c, 1), np.int32(5)) == 5


def test_while_accepts_a_weakly_typed_python_scalar_carry():
    assert lax.while_loop(lambda c: lax.lt(c, 7), lambda c: lax.add(c, np.int32(2)), 0) == 8


# --------------------------------------------------------------------------
# Conditional, Call and Map with numbers
# --------------------------------------------------------------------------

def test_cond_runs_the_branch_the_predicate_picks():
    for pred, want in ((True, 10.0), (False, 4.0)):
        got = lax.cond(pred, lambda x: lax.mul(x, 2.0), lambda x: lax.sub(x, 1.0), np.float32(5))
        assert got == want
        got = traced(lambda p, x: lax.cond(p, lambda a: lax.mul(a, 2.0),
                                           lambda a: lax.sub(a, 1.0), x))(pred, np.float32(5))
        assert got == want


def test_xla_conditional_gives_each_branch_its_own_operand_type():
    # Conditional(pred, true_operand: (f32, f32), true_computation, false_operand: f32, ...)
    def run(pred):
        return lax.conditional(pred, [lambda t: lax.add(t[0], t[1]), lambda x: lax.mul(x, 3.0)],
                               [(np.float32(1), np.float32(2)), np.float32(4)])
    assert run(True) == 3.0 and run(False) == 12.0
    assert lax.conditional(np.int32(1), [lambda x: x, lambda x: lax.neg(x)],
                           [np.float32(1), np.float32(7)]) == -7.0


@pytest.mark.parametrize("index", [-5, -1, 0, 1, 2, 3, 100])
def test_switch_clamps_an_out_of_range_index(index):
    branches = [lambda x, k=k: lax.add(x, float(10 ** k)) for k in range(3)]
    want = 1.0 + 10 ** min(max(index, 0), 2)   # JAX's switch clamps (XLA's conditional would
    # run the last branch: test_conditional_out_of_range_index_runs_the_last_branch)
    assert lax.switch(index, branches, np.float32(1)) == want
    assert traced(lambda i, x: lax.switch(i, branches, x))(np.int32(index), np.float32(1)) == \
        want


def test_call_runs_its_computation_on_pytrees():
    def computation(a, pair):
        return {"prod": lax.mul(a, pair[0]), "sum": lax.add(a, pair[1])}
    out = lax.call(computation, np.int32(3), (np.int32(4), np.int32(5)))
    assert (int(out["prod"]), int(out["sum"])) == (12, 8)
    assert lax.call(lambda: np.float32(2.5)) == 2.5   # no arguments is allowed


def test_map_document_example_with_a_static_operand():
    # Map(op1, op2, op3, computation, par1): elem_out = computation(elem1, elem2, elem3, par1)
    op1 = np.array([[1, 2], [3, 4]], np.float32)
    op2 = np.array([[10, 20], [30, 40]], np.float32)
    op3 = np.array([[0.5, 0.5], [1.5, 1.5]], np.float32)
    par1 = np.float32(100)

    def f(a, b, c, p):
        return lax.map([a, b, c], lambda x, y, z: lax.add(lax.add(lax.mul(x, y), z), p))
    want = op1 * op2 + op3 + par1
    np.testing.assert_array_equal(f(op1, op2, op3, par1), want)
    graph = make_graph(f)(op1, op2, op3, par1)
    np.testing.assert_array_equal(eval_graph(graph, op1, op2, op3, par1)[0], want)
    assert re.search(r"map\(%a, %b, %c, %p\), computation=%map_computation, "
                     r"dimensions=\{0,1\}, num_consts=1", graph.as_text())


def test_map_mixes_element_types_and_returns_several_results():
    x = np.array([1.5, -2.0, 3.25], np.float32)
    n = np.array([2, 3, -1], np.int32)
    def computation(a, k):
        return lax.mul(a, lax.convert_element_type(k, np.float32)), lax.gt(k, 0)
    scaled, positive = lax.map([x, n], computation)
    np.testing.assert_array_equal(scaled, x * n)
    np.testing.assert_array_equal(positive, n > 0)
    assert scaled.dtype == np.float32 and positive.dtype == np.bool_


def test_map_of_rank_0_and_empty_operands():
    assert lax.map([np.float32(2)], lambda a: lax.mul(a, a)) == 4.0
    out = lax.map([np.zeros((0, 3), np.int32)], lambda a: lax.convert_element_type(a, np.float64))
    assert out.shape == (0, 3) and out.dtype == np.float64


def test_map_sequential_is_jax_lax_map():
    xs = {"a": np.arange(4.0), "b": np.arange(8.0).reshape(4, 2)}
    ys = lax.map_sequential(lambda d: lax.add(d["b"], lax.broadcast_in_dim(d["a"], (2,), ())), xs)
    np.testing.assert_array_equal(ys, xs["b"] + xs["a"][:, None])


# --------------------------------------------------------------------------
# scan and fori_loop
# --------------------------------------------------------------------------

def test_scan_stacks_outputs_and_returns_the_final_carry():
    xs = np.arange(1, 6, dtype=np.int32)
    carry, ys = lax.scan(lambda c, x: (lax.add(c, x), lax.mul(c, x)), np.int32(0), xs)
    assert carry == 15
    np.testing.assert_array_equal(ys, [0, 2, 9, 24, 50])   # c before each step times x
    carry, ys = lax.scan(lambda c, x: (lax.add(c, x), c), np.int32(0), xs, reverse=True)
    np.testing.assert_array_equal(ys, [14, 12, 9, 5, 0])   # stored in xs order


def test_scan_with_length_only_and_with_zero_length():
    carry, ys = lax.scan(lambda c, _: (lax.mul(c, 2), c), np.int32(1), None, length=5)
    assert carry == 32
    np.testing.assert_array_equal(ys, [1, 2, 4, 8, 16])
    carry, ys = lax.scan(lambda c, x: (lax.add(c, x), lax.mul(x, 2.0)), np.full(2, 3, np.float32),
                         np.zeros((0, 2), np.float32))
    np.testing.assert_array_equal(carry, [3, 3])
    assert ys.shape == (0, 2) and ys.dtype == np.float32


def test_fori_loop_with_concrete_and_traced_bounds():
    assert lax.fori_loop(2, 6, lambda i, x: lax.add(x, lax.mul(i, i)), 0) == 4 + 9 + 16 + 25
    assert lax.fori_loop(5, 2, lambda i, x: lax.add(x, 1), np.int32(7)) == 7
    graph = make_graph(lambda n, x: lax.fori_loop(0, n, lambda i, v: lax.add(v, i), x))(
        np.int32(0), np.int32(0))
    assert eval_graph(graph, np.int32(10), np.int32(1)) == [46]
    assert "cond_nconsts=1" in graph.as_text()     # the traced upper bound is captured


# --------------------------------------------------------------------------
# property tests against plain Python loops
# --------------------------------------------------------------------------

def test_while_and_fori_loop_match_python_loops():
    for _ in range(25):
        start, step, limit = (int(v) for v in rng.integers(-50, 50, 3))
        step = abs(step) + 1
        want = start
        while want < limit:
            want += step
        f = traced(lambda s: lax.while_loop(lambda c: lax.lt(c, limit),
                                            lambda c: lax.add(c, step), s))
        assert f(np.int32(start)) == want
        lo, hi = (int(v) for v in rng.integers(-10, 20, 2))
        acc = 1
        for i in range(lo, hi):
            acc = (acc * 3 + i + 10) % 1000
        def body(i, a):
            t = lax.add(lax.mul(a, 3), lax.add(i, 10))     # i >= -10: t stays non-negative
            return lax.sub(t, lax.mul(lax.div(t, 1000), 1000))
        got = lax.fori_loop(lo, hi, body, np.int32(1))
        assert got == acc   # values stay non-negative: truncating division is Python's here


def _collatz_steps(n: int) -> int:
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_nested_while_and_cond_match_python_collatz():
    def steps(n):
        def body(c):
            m, k = c
            even = lax.eq(lax.sub(m, lax.mul(lax.div(m, 2), 2)), 0)
            m = lax.cond(even, lambda v: lax.div(v, 2), lambda v: lax.add(lax.mul(v, 3), 1), m)
            return m, lax.add(k, 1)
        return lax.while_loop(lambda c: lax.ne(c[0], 1), body, (n, np.int32(0)))[1]
    ns = rng.integers(1, 300, 12)
    f = traced(steps)
    for n in ns:
        assert steps(np.int32(n)) == _collatz_steps(int(n))
        assert f(np.int32(n)) == _collatz_steps(int(n))


def test_scan_matches_a_python_loop_over_pytrees():
    for _ in range(10):
        n, d = (int(v) for v in rng.integers(0, 6, 2))
        xs = {"u": rng.standard_normal((n, d)), "w": rng.standard_normal(n)}
        init = (np.zeros(d), np.zeros((), np.float64))
        reverse = bool(rng.integers(2))

        def f(carry, x):
            v, s = carry
            v = lax.add(lax.mul(v, 0.5), x["u"])
            s = lax.add(s, x["w"])
            return (v, s), {"v": v, "s2": lax.mul(s, s)}
        (v, s), ys = lax.scan(f, init, xs, reverse=reverse)
        wv, ws = np.zeros(d), 0.0
        want_v, want_s2 = np.zeros((n, d)), np.zeros(n)
        for i in (reversed(range(n)) if reverse else range(n)):
            wv = wv * 0.5 + xs["u"][i]
            ws = ws + xs["w"][i]
            want_v[i], want_s2[i] = wv, ws * ws
        np.testing.assert_allclose(v, wv)
        np.testing.assert_allclose(s, ws)
        np.testing.assert_allclose(ys["v"], want_v)
        np.testing.assert_allclose(ys["s2"], want_s2)


def test_map_matches_numpy_over_random_shapes():
    for _ in range(10):
        shape = tuple(int(v) for v in rng.integers(1, 4, rng.integers(0, 4)))
        a = rng.integers(-20, 20, shape).astype(np.int32)
        b = rng.integers(-20, 20, shape).astype(np.int32)
        out = lax.map([a, b], lambda x, y: lax.sub(lax.mul(x, y), lax.mul(x, 2)))
        np.testing.assert_array_equal(out, a * b - 2 * a)


def test_switch_matches_python_indexing_clamped():
    branches = [lambda x, k=k: lax.mul(x, float(k + 2)) for k in range(4)]
    f = traced(lambda i, x: lax.switch(i, branches, x))
    for index in rng.integers(-6, 9, 15):
        k = min(max(int(index), 0), 3)
        assert f(np.int32(index), np.float32(1.5)) == 1.5 * (k + 2)


@pytest.mark.parametrize("index", [-5, -1, 2, 7])
def test_conditional_out_of_range_index_runs_the_last_branch(index):
    fns = [lambda x, k=k: lax.add(x, float(10 ** k)) for k in range(3)]
    want = 1.0 + 10 ** (index if 0 <= index < 3 else 2)   # XLA's Conditional
    ops = [np.float32(1)] * 3
    assert lax.conditional(np.int32(index), fns, ops) == want
    assert traced(lambda i, x: lax.conditional(i, fns, [x] * 3))(np.int32(index),
                                                                 np.float32(1)) == want


# --------------------------------------------------------------------------
# closures over outer traced values become operands
# --------------------------------------------------------------------------

def test_loop_body_closing_over_an_outer_traced_value_takes_it_as_an_operand():
    def f(step, limit):
        return lax.while_loop(lambda c: lax.lt(c, limit), lambda c: lax.add(c, step),
                              np.float32(0))
    graph = make_graph(f)(np.float32(1), np.float32(5))
    (eq,) = [e for e in graph.equations if e.primitive.name == "while"]
    step, limit = graph.in_vars
    assert eq.params["cond_nconsts"] == 1 and eq.params["body_nconsts"] == 1
    assert eq.inputs[:2] == (limit, step)
    assert re.search(r"while\(%limit, %step, 0\.0:f32\), cond_graph=%while_cond, "
                     r"body_graph=%while_body, cond_nconsts=1, body_nconsts=1", graph.as_text())
    assert eval_graph(graph, np.float32(1.5), np.float32(5)) == [6.0]


@pytest.mark.parametrize("name, build", [
    ("conditional", lambda y: lambda p, x: lax.cond(p, lambda a: lax.add(a, y), lambda a: a, x)),
    ("scan", lambda y: lambda p, x: lax.scan(lambda c, e: (lax.add(c, y), e), x,
                                             np.arange(3.0, dtype=np.float32))[0]),
    ("call", lambda y: lambda p, x: lax.call(lambda a: lax.mul(a, y), x)),
    ("map", lambda y: lambda p, x: lax.map([x], lambda a: lax.add(a, y))),
])
def test_every_computation_op_passes_captured_values_as_operands(name, build):
    def f(p, x, y):
        return build(y)(p, x)
    graph = make_graph(f)(True, np.float32(1), np.float32(2))
    (eq,) = [e for e in graph.equations if e.primitive.name == name]
    assert graph.in_vars[2] in eq.inputs    # y
    assert re.search(rf"{name}\([^)]*%y", graph.as_text())


def test_nested_control_flow_threads_a_value_captured_two_levels_up():
    def f(xs, bound):
        def step(c, x):
            c = lax.cond(lax.gt(x, 0.0),
                         lambda v: lax.while_loop(lambda w: lax.lt(w, bound),
                                                  lambda w: lax.add(w, x), v),
                         lambda v: lax.sub(v, 1.0), c)
            return c, c
        return lax.scan(step, np.float32(0), xs)
    xs = np.array([2.0, -1.0, 3.0, 0.5], np.float32)
    want_c, want_ys = 0.0, []
    for x in xs:
        if x > 0:
            while want_c < 10.0:
                want_c += x
        else:
            want_c -= 1.0
        want_ys.append(want_c)
    graph = make_graph(f)(xs, np.float32(10))
    c, ys = eval_graph(graph, xs, np.float32(10))
    assert c == want_c
    np.testing.assert_array_equal(ys, want_ys)
    eager_c, eager_ys = f(xs, np.float32(10))
    assert eager_c == want_c
    text = graph.as_text()
    for computation in ("%while_cond", "%while_body", "%branch_0", "%branch_1", "%scan_body"):
        assert computation + " (" in text
    assert re.search(r"scan\(%bound, ", text)   # bound enters the scan, the cond, the while


# --------------------------------------------------------------------------
# every op traces and prints with its sub-graphs
# --------------------------------------------------------------------------

X = np.arange(3, dtype=np.float32)


@pytest.mark.parametrize("fn, pieces", [
    (lambda x: lax.while_loop(lambda c: lax.lt(c[0], 3), lambda c: (lax.add(c[0], 1), c[1]),
                              (0, x)),
     ["while(", "%while_cond (", "%while_body ("]),
    # static bounds: a scan of length upper - lower (as JAX's fori_loop), not a While
    (lambda x: lax.fori_loop(0, 4, lambda i, v: lax.mul(v, 2.0), x),
     ["scan(", "num_carry=2, length=4", "%scan_body ("]),
    (lambda x: lax.cond(True, lambda a: a, lambda a: lax.neg(a), x),
     ["conditional(", "branches={%branch_0,%branch_1}", "operand_counts={1,1}"]),
    (lambda x: lax.switch(2, [lambda a: a] * 3, x),
     ["conditional(2:s32", "branches={%branch_0,%branch_1,%branch_2}"]),
    (lambda x: lax.scan(lambda c, e: (lax.add(c, e), e), np.float32(0), x),
     ["scan(", "body=%scan_body", "num_carry=1, length=3, reverse=false", "%scan_body ("]),
    (lambda x: lax.map_sequential(lambda e: lax.mul(e, e), x), ["scan("]),
    (lambda x: lax.call(lambda a: lax.neg(a), x), ["call(%x), computation=%callee", "%callee ("]),
    (lambda x: lax.map([x, x], lax.add),
     ["map(%x, %x), computation=%map_computation", "%map_computation (p0: f32[], p1: f32[])"]),
])
def test_each_op_traces_and_prints_its_sub_graphs(fn, pieces):
    text = make_graph(fn)(X).as_text()
    for piece in pieces:
        assert piece in text, (piece, text)


# --------------------------------------------------------------------------
# errors, raised when tracing
# --------------------------------------------------------------------------

F2 = np.zeros(2, np.float32)


@pytest.mark.parametrize("fn, arg, message", [
    (lambda c: lax.while_loop(lambda v: v, lambda v: v, c), np.int32(0),
     r"while: the condition must return a scalar pred, got \(s32\[\]\)"),
    (lambda c: lax.while_loop(lambda v: lax.lt(v, 1.0), lambda v: v, c), F2,
     r"while: the condition must return a scalar pred, got \(pred\[2\]\)"),
    (lambda c: lax.while_loop(lambda v: True, lambda v: lax.broadcast_in_dim(v, (2, 2), (1,)), c),
     F2, r"while: the body result \(f32\[2,2\]\) must equal the carry \(f32\[2\]\)"),
    (lambda c: lax.while_loop(lambda v: True, lambda v: lax.convert_element_type(v, np.float64),
                              c), F2,
     r"while: the body result \(f64\[2\]\) must equal the carry \(f32\[2\]\)"),
    (lambda c: lax.while_loop(lambda v: True, lambda v: (v, v), c), F2,
     r"while: body_fun must return the carry's structure PyTreeDef\(\*\), got "
     r"PyTreeDef\(\(\*, \*\)\)"),
    (lambda c: lax.cond(True, lambda: c, lambda: lax.convert_element_type(c, np.int32)), F2,
     r"cond: false_fun returns PyTreeDef\(\*\) of types \(s32\[2\]\) but true_fun returns "
     r"PyTreeDef\(\*\) of types \(f32\[2\]\)"),
    (lambda c: lax.switch(0, [lambda: c, lambda: c, lambda: (c, c)]), F2,
     r"switch: branch 2 returns PyTreeDef\(\(\*, \*\)\) of types \(f32\[2\], f32\[2\]\) but "
     r"branch 0 returns PyTreeDef\(\*\)"),
    (lambda c: lax.cond(np.complex64(1), lambda: c, lambda: c), F2,  # (numbers mean != 0)
     r"cond: pred must be a scalar pred, got c64\[\]"),
    (lambda c: lax.cond(lax.lt(c, 1.0), lambda: c, lambda: c), F2,
     r"cond: pred must be a scalar pred, got pred\[2\]"),
    (lambda c: lax.switch(np.float32(1), [lambda: c], ), F2,  # (integer types convert, as JAX's)
     r"switch: index must be a scalar s32, got f32\[\] \(convert with convert_element_type\)"),
    (lambda c: lax.switch(np.array([0, 1], np.int32), [lambda: c]), F2,
     r"switch: index must be a scalar s32, got s32\[2\]"),
    (lambda c: lax.switch(True, [lambda: c, lambda: c]), F2,
     r"switch: index must be a scalar s32, got pred\[\]"),
    (lambda c: lax.switch(0, []), F2, r"switch: branches must hold at least one function"),
    (lambda c: lax.conditional(True, [lambda a: a] * 3, [c] * 3), F2,
     r"conditional: a pred selector needs exactly two branches \(true, false\), got 3"),
    (lambda c: lax.conditional(0, [lambda a: a] * 2, [c]), F2,
     r"conditional: 2 branch_computations but 1 branch_operands"),
    (lambda c: lax.scan(lambda s, x: (lax.convert_element_type(s, np.float32), x), np.int32(0), c),
     F2, r"scan: the body's carry result \(f32\[\]\) must equal the carry \(s32\[\]\)"),
    (lambda c: lax.scan(lambda s, x: (s, x), np.int32(0), (c, np.zeros(3))), F2,
     r"scan: the xs leaves' leading dimensions and length must agree"),
    (lambda c: lax.scan(lambda s, x: (s, x), np.int32(0), c, length=5), F2,
     r"scan: the xs leaves' leading dimensions and length must agree"),
    (lambda c: lax.scan(lambda s, x: (s, x), np.int32(0), None), F2,
     r"scan: length must be given when xs has no leaves"),
    (lambda c: lax.scan(lambda s, x: (s, x), np.int32(0), np.float32(1)), F2,
     r"scan: every xs leaf must be an array with a leading dimension"),
    (lambda c: lax.scan(lambda s, x: s, np.float32(0), c), F2,
     r"scan: f must return a pair \(carry, y\), got PyTreeDef\(\*\)"),
    (lambda c: lax.map([c, np.zeros(3, np.float32)], lax.add), F2,
     r"map: operands must be arrays of the same dimensions \(operands: f32\[2\]\{0\}, "
     r"f32\[3\]\{0\}\)"),
    (lambda c: lax.map([np.zeros((2, 2))], lax.neg, dimensions=(1, 0)), F2,
     r"map: dimensions \(1, 0\) must be 0\.\.1 in order"),
    (lambda c: lax.map([c], lambda a: lax.broadcast_in_dim(a, (2,), ())), F2,
     r"map: the computation must return scalars, got \(f32\[2\]\)"),
    (lambda c: lax.map([], lax.neg), F2, r"map: needs at least one operand"),
    (lambda c: lax.fori_loop(np.float32(0.0), 3, lambda i, v: v, c), F2,
     r"fori_loop: lower must be an integer scalar, got f32\[\]"),
])
def test_invalid_control_flow_raises_when_tracing(fn, arg, message):
    with pytest.raises(ShapeError, match=message):
        make_graph(fn)(arg)


def test_shape_rules_check_sub_graphs_against_operands():
    graph = make_graph(lambda x: lax.call(lax.neg, x))(np.float32(1))
    callee = graph.equations[0].params["computation"]
    with pytest.raises(ShapeError, match=r"call: the computation's parameters \(f32\[\]\) must "
                                         r"equal the operands \(s32\[\]\)"):
        lax.control_flow.call_p.bind(np.int32(1), computation=callee)


# --------------------------------------------------------------------------
# the family's StableHLO conformance cases, eagerly and traced
# --------------------------------------------------------------------------

CASES = [c for c in load_cases() if c["op"] in ("while", "if", "case", "call", "map",
                                                 "chlo.scan")]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
@pytest.mark.parametrize("wrap", [None, traced], ids=["eager", "traced"])
def test_conformance_case(case, wrap):
    check_results(case, run_case_locally(case, wrap))


def test_weakly_typed_initial_carry_takes_the_body_type():
    """scan/while_loop/fori_loop with a Python-scalar init and f64 work (as JAX)."""
    import numxla.primitives as lax
    v = np.arange(1.0, 6.0)
    carry, ys = lax.scan(lambda c, x: (c * 0.5 + x, c), 1.0, v)
    expected, c = [], 1.0
    for x in v:
        expected.append(c)
        c = c * 0.5 + x
    assert np.asarray(carry).dtype == np.float64 and float(carry) == c
    np.testing.assert_array_equal(ys, expected)
    out = lax.while_loop(lambda c: c < 10, lambda c: c * 2.0 + v[0], 1.0)
    assert float(out) == 15.0
    total = lax.fori_loop(0, 3, lambda i, c: c + lax.convert_element_type(i, np.float64), 0.0)
    assert np.asarray(total).dtype == np.float64 and float(total) == 3.0
