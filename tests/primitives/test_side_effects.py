"""Tokens and side effects: after_all, infeed/outfeed, send/recv, custom_call,
composite_call, optimization_barrier, tuple/get_tuple_element."""
from __future__ import annotations

import re

import numpy as np
import pytest

import numxla.primitives as lax
from tests.conformance.harness import check_results, load_cases, load_mappings
from tests.conformance.ops_control_flow import run_case_locally
from numxla.tracer import AbstractValue, Shape, eval_graph, make_graph, pytree
from numxla.tracer.core import PRIMITIVES, ShapeError
from numxla.tracer.shapes import bf16_from_f32, bf16_to_f32

load_mappings()


@pytest.fixture(autouse=True)
def empty_host_queues():
    """Every test starts and ends with empty infeed/outfeed queues and channels."""
    for q in (lax.infeed_queue, lax.outfeed_queue):
        q.clear()
    lax.channels.clear()
    yield
    for q in (lax.infeed_queue, lax.outfeed_queue):
        q.clear()
    lax.channels.clear()


def traced(fn):
    def run(*args):
        graph = make_graph(fn)(*args)
        return graph.out_tree.unflatten(eval_graph(graph, *pytree.tree_leaves(args)))
    return run


# --------------------------------------------------------------------------
# the semantics document's examples
# --------------------------------------------------------------------------

def test_tuple_and_get_tuple_element_document_example():
    v = np.arange(10, dtype=np.float32)          # f32[10]{0, 1, ..., 9}
    s = np.int32(5)
    t = lax.tuple([v, s])                          # (f32[10], s32)
    assert isinstance(t, lax.TupleValue)
    assert t.__numxla_aval__().shape == Shape.tuple_of([Shape("f32", (10,)), Shape("s32", ())])
    element_1 = lax.get_tuple_element(t, 1)
    assert element_1 == 5 and element_1.dtype == np.int32
    np.testing.assert_array_equal(lax.get_tuple_element(t, 0), v)
    text = make_graph(lambda v, s: lax.get_tuple_element(lax.tuple([v, s]), 1))(v, s).as_text()
    assert re.search(r"= \(f32\[10\]\{0\}, s32\[\]\) tuple\(%v, %s\)", text)
    assert re.search(r"= s32\[\] get_tuple_element\(%tuple\.0\), index=1", text)


def test_nested_tuples_flow_through_ops_and_traces():
    def f(a, b):
        inner = lax.tuple([b])
        outer = lax.tuple([a, inner])
        return lax.get_tuple_element(lax.get_tuple_element(outer, 1), 0), outer
    a, b = np.array([1.0, 2.0]), np.int64(3)
    for run in (f, traced(f)):
        got, outer = run(a, b)
        assert got == 3
        assert isinstance(outer, lax.TupleValue) and isinstance(outer[1], lax.TupleValue)


def test_custom_call_document_example():
    # CustomCall("myfunc", {x, y}, f32[3x3]) with x = f32[2] {1,2},
    # y = f32[2x3] {{10,20,30},{40,50,60}}; myfunc sets z[0][0] = x[1] + y[1][0]
    x = np.array([1, 2], np.float32)
    y = np.array([[10, 20, 30], [40, 50, 60]], np.float32)
    seen = []

    def myfunc(x, y):
        seen.append((x.copy(), y.copy()))
        z = np.zeros((3, 3), np.float32)
        z[0, 0] = x[1] + y[1, 0]
        return z

    lax.register_custom_call_target("myfunc", myfunc)
    z = lax.custom_call("myfunc", [x, y], "f32[3,3]")
    assert z.shape == (3, 3) and z[0, 0] == 42.0
    np.testing.assert_array_equal(seen[0][0], x)
    np.testing.assert_array_equal(seen[0][1], y)
    graph = make_graph(lambda x, y: lax.custom_call("myfunc", [x, y], Shape("f32", (3, 3))))(x, y)
    assert re.search(r"custom_call\(%x, %y\), call_target_name=myfunc, "
                     r"result_shapes=\{f32\[3,3\]\{1,0\}\}, has_side_effect=false", graph.as_text())
    assert eval_graph(graph, x, y)[0][0, 0] == 42.0


def test_composite_call_document_example():
    # f32[] call(f32[] %cst), to_apply=%computation, is_composite=true,
    #   composite.name="foo.bar", composite.attributes={n = 1 : i32, tensor = dense<1>}, version 1
    def decomposition(x):
        return lax.add(x, 1.0)
    cst = np.float32(41)
    out = lax.composite_call(decomposition, cst, name="foo.bar",
                             attributes={"n": 1, "tensor": np.array(1, np.int32)}, version=1)
    assert out == 42.0 and out.dtype == np.float32
    graph = make_graph(lambda c: lax.composite_call(decomposition, c, name="foo.bar",
                                                    attributes={"n": 1, "tensor": [1]},
                                                    version=1))(cst)
    text = graph.as_text()
    assert "composite_call(%c), name=foo.bar, attributes={n = 1, tensor = (1,)}, version=1, " \
           "decomposition=%foo_bar" in text
    assert "%foo_bar (p0: f32[]) -> (f32[])" in text
    assert eval_graph(graph, cst) == [42.0]


def test_infeeds_in_two_while_loops_read_in_total_order():
    # result1 = while (cond, init) { Infeed(shape) }; result2 = while (cond, init = result1) {...}
    for k in range(1, 7):
        lax.infeed_queue.put(np.full(2, k, np.int32))

    def loop(state):
        def body(c):
            i, acc, tok = c
            value, tok = lax.infeed(tok, "s32[2]")
            return lax.add(i, 1), lax.add(lax.mul(acc, 10), value), tok
        return lax.while_loop(lambda c: lax.lt(c[0], 3), body, state)

    def program(token):
        _, first, token = loop((np.int32(0), np.zeros(2, np.int32), token))
        _, second, token = loop((np.int32(0), np.zeros(2, np.int32), token))
        return first, second, token

    first, second, token = program(lax.create_token())
    np.testing.assert_array_equal(first, [123, 123])
    np.testing.assert_array_equal(second, [456, 456])
    assert isinstance(token, lax.Token) and len(lax.infeed_queue) == 0
    for k in range(1, 7):
        lax.infeed_queue.put(np.full(2, k, np.int32))
    first, second, _ = traced(program)(lax.create_token())
    np.testing.assert_array_equal(second, [456, 456])


# --------------------------------------------------------------------------
# tokens, queues and channels
# --------------------------------------------------------------------------

def test_after_all_joins_tokens_and_create_token_makes_one():
    t = lax.create_token()
    assert isinstance(t, lax.Token)
    assert isinstance(lax.after_all(t, lax.create_token(), t), lax.Token)
    assert lax.after_all().__numxla_aval__() == AbstractValue(Shape.token())
    text = make_graph(lambda a, b: lax.after_all(a, b))(t, t).as_text()
    assert "(a: token[], b: token[]) -> (token[])" in text
    assert re.search(r"token\[\] after_all\(%a, %b\)", text)


def test_outfeed_pushes_values_the_user_reads_back():
    def program(x, token):
        token = lax.outfeed(x, token)
        return lax.outfeed(lax.mul(x, 2.0), token, config="second")
    x = np.array([1.5, 2.5], np.float32)
    assert isinstance(program(x, lax.create_token()), lax.Token)
    np.testing.assert_array_equal(lax.outfeed_queue.get(), x)
    np.testing.assert_array_equal(lax.outfeed_queue.get(), 2 * x)
    text = make_graph(program)(x, lax.create_token()).as_text()
    assert "outfeed(%x, %token)" in text and "config=second" in text
    assert len(lax.outfeed_queue) == 0      # tracing runs nothing


def test_a_send_then_a_recv_on_one_channel_deliver_the_value_within_a_program():
    def program(x, token):
        token = lax.send(x, token, channel_id=7)
        token = lax.send(lax.neg(x), token, channel_id=8)
        a, token = lax.recv(token, "f32[2]", 8)
        b, token = lax.recv(token, Shape("f32", (2,)), 7)
        return a, b
    x = np.array([3.0, 4.0], np.float32)
    for run in (program, traced(program)):
        a, b = run(x, lax.create_token())
        np.testing.assert_array_equal(a, -x)
        np.testing.assert_array_equal(b, x)
    text = make_graph(program)(x, lax.create_token()).as_text()
    assert re.search(r"token\[\] send\(%x, %token\), channel_id=7, is_host_transfer=false", text)
    assert re.search(r"\(f32\[2\]\{0\}, token\[\]\) recv\(%send\.\d+\), shape=f32\[2\]\{0\}, "
                     r"channel_id=8", text)


def test_host_transfers_fail_clearly_on_an_empty_queue_or_a_wrong_shape():
    token = lax.create_token()
    with pytest.raises(lax.HostTransferError, match=r"infeed: the infeed queue is empty"):
        lax.infeed(token, "f32[2]")
    with pytest.raises(lax.HostTransferError, match=r"recv: the channel 4 is empty"):
        lax.recv(token, "f32[2]", 4)
    lax.infeed_queue.put(np.zeros(3, np.float64))
    with pytest.raises(lax.HostTransferError, match=r"infeed: the infeed queue held a "
                                                     r"f64\[3\] value, the program reads "
                                                     r"f32\[2\]$"):
        lax.infeed(token, "f32[2]")


def test_infeed_of_a_tuple_shape():
    lax.infeed_queue.put(lax.TupleValue((np.ones(2, np.float32), np.int32(3))))
    value, _ = lax.infeed(lax.create_token(), Shape.tuple_of([Shape("f32", (2,)),
                                                              Shape("s32", ())]))
    assert isinstance(value, lax.TupleValue) and lax.get_tuple_element(value, 1) == 3


def test_bf16_host_values_are_uint16_words():
    words = bf16_from_f32(np.array([1.5, -2.0], np.float32))
    lax.infeed_queue.put(words)
    value, _ = lax.infeed(lax.create_token(), "bf16[2]")
    np.testing.assert_array_equal(bf16_to_f32(value), [1.5, -2.0])


def test_effectful_primitives_are_marked():
    effectful = {"infeed", "outfeed", "send", "recv", "custom_call"}
    for name in effectful | {"after_all", "tuple", "get_tuple_element", "optimization_barrier",
                             "composite_call"}:
        assert PRIMITIVES[name].has_side_effect == (name in effectful), name


# --------------------------------------------------------------------------
# custom_call
# --------------------------------------------------------------------------

def test_custom_call_with_several_results_typed_ffi_attributes_and_api_version_names():
    def split(x, *, scale):
        return x * scale, np.int32(x.size)
    lax.register_custom_call_target("test.split", split)
    x = np.arange(4, dtype=np.float32)
    scaled, size = lax.custom_call("test.split", [x], ["f32[4]", "s32[]"],
                                   api_version="typed_ffi", backend_config={"scale": 2.0},
                                   has_side_effect=True)
    np.testing.assert_array_equal(scaled, 2 * x)
    assert size == 4
    text = make_graph(lambda x: lax.custom_call("test.split", [x], ["f32[4]", "s32[]"],
                                                api_version=4,
                                                backend_config={"scale": 2.0}))(x).as_text()
    assert "api_version=API_VERSION_TYPED_FFI, backend_config={scale = 2.0}" in text


def test_custom_call_passes_an_opaque_string_backend_config():
    lax.register_custom_call_target("test.opaque",
                                    lambda x, backend_config: x + len(backend_config))
    assert lax.custom_call("test.opaque", [np.int32(1)], "s32[]", backend_config="abcd") == 5


def test_custom_call_errors():
    x = np.zeros(2, np.float32)
    lax.register_custom_call_target("test.double", lambda x: 2 * x,
                                    shape_rule=lambda aval: aval)
    lax.register_custom_call_target("test.bad", lambda x: np.zeros(3, np.float64))
    with pytest.raises(ShapeError, match=r"custom_call: unknown call_target_name 'nope'; "
                                         r"register it with register_custom_call_target"):
        make_graph(lambda x: lax.custom_call("nope", [x], "f32[2]"))(x)
    with pytest.raises(ShapeError, match=r"custom_call: target 'test.double' returns "
                                         r"\(f32\[2\]\) for these operands, but result_shapes "
                                         r"is \(f32\[3\]\)"):
        make_graph(lambda x: lax.custom_call("test.double", [x], "f32[3]"))(x)
    with pytest.raises(ShapeError, match=r"custom_call: a dictionary backend_config needs "
                                         r"api_version=API_VERSION_TYPED_FFI"):
        make_graph(lambda x: lax.custom_call("test.double", [x], "f32[2]",
                                             backend_config={"a": 1}))(x)
    with pytest.raises(ShapeError, match=r"custom_call: api_version 'v9' is not one of"):
        lax.custom_call("test.double", [x], "f32[2]", api_version="v9")
    with pytest.raises(ShapeError, match=r"custom_call: target 'test.bad' returned f64\[3\] "
                                         r"as result 0, result_shapes declares f32\[2\]$"):
        lax.custom_call("test.bad", [x], "f32[2]")


# --------------------------------------------------------------------------
# composite_call, optimization_barrier
# --------------------------------------------------------------------------

def test_composite_call_closes_over_outer_values_and_returns_pytrees():
    def f(x, y):
        return lax.composite_call(lambda a: {"s": lax.add(a, y), "d": lax.sub(a, y)}, x,
                                  name="my.addsub")
    out = f(np.float32(5), np.float32(2))
    assert (out["s"], out["d"]) == (7.0, 3.0)
    text = make_graph(f)(np.float32(5), np.float32(2)).as_text()
    assert "composite_call(%x, %y), name=my.addsub, attributes={}, version=0" in text


def test_optimization_barrier_is_the_identity_on_a_pytree():
    tree = {"a": np.float32(1), "b": [np.arange(3), lax.create_token()]}
    out = lax.optimization_barrier(tree)
    assert out["a"] == 1 and isinstance(out["b"][1], lax.Token)
    np.testing.assert_array_equal(out["b"][0], np.arange(3))
    text = make_graph(lambda a, b: lax.optimization_barrier((a, b)))(
        np.float32(1), np.arange(3, dtype=np.int32)).as_text()
    assert re.search(r"\(f32\[\], s32\[3\]\{0\}\) optimization_barrier\(%a, %b\)", text)
    assert lax.optimization_barrier(()) == ()


# --------------------------------------------------------------------------
# errors, raised when tracing
# --------------------------------------------------------------------------

TOKEN = lax.create_token()
F2 = np.zeros(2, np.float32)
T2 = lax.TupleValue((F2, np.int32(1)))


@pytest.mark.parametrize("fn, args, message", [
    (lambda t, x: lax.after_all(t, x), (TOKEN, F2),
     r"after_all: operand 1 must be a token, got f32\[2\]\{0\}"),
    (lambda t, x: lax.infeed(x, "f32[2]"), (TOKEN, F2),
     r"infeed: token must be a token, got f32\[2\]\{0\}"),
    (lambda t, x: lax.infeed(t, Shape.token()), (TOKEN, F2),
     r"infeed: shape token\[\] must be an array or a tuple of arrays"),
    (lambda t, x: lax.infeed(t, Shape.tuple_of([Shape.tuple_of([])])), (TOKEN, F2),
     r"infeed: shape \(\(\)\) must be an array or a tuple of arrays \(no tokens, no nested"),
    (lambda t, x: lax.infeed(t, [2, 2]), (TOKEN, F2),
     r"infeed: shape must be a Shape, a shape string"),
    (lambda t, x: lax.outfeed(t, t), (TOKEN, F2),
     r"outfeed: operand must be an array or a tuple, not a token"),
    (lambda t, x: lax.outfeed(x, x), (TOKEN, F2), r"outfeed: token must be a token"),
    (lambda t, x: lax.send(x, t, -1), (TOKEN, F2),
     r"send: channel_id must be a non-negative int, got -1"),
    (lambda t, x: lax.send(x, x, 1), (TOKEN, F2), r"send: token must be a token"),
    (lambda t, x: lax.recv(t, "f32[2]", 1.5), (TOKEN, F2),
     r"recv: channel_id must be a non-negative int, got 1\.5"),
    (lambda t, x: lax.recv(x, "f32[2]", 1), (TOKEN, F2), r"recv: token must be a token"),
    (lambda t, x: lax.send(x, t, 1, source_target_pairs=[(0, 1), (0, 2)]), (TOKEN, F2),
     r"send: source_target_pairs \(\(0, 1\), \(0, 2\)\): a process is the source of several"),
    (lambda t, x: lax.recv(t, "f32[2]", 1, source_target_pairs=[(0, 1), (2, 1)]), (TOKEN, F2),
     r"recv: source_target_pairs \(\(0, 1\), \(2, 1\)\): a process is the target of several"),
    (lambda t, x: lax.send(x, t, 1, source_target_pairs=[(0, -1)]), (TOKEN, F2),
     r"send: source_target_pairs \(\(0, -1\),\) hold a negative process id"),
    (lambda t, x: lax.send(x, t, 1, source_target_pairs=[0, 1]), (TOKEN, F2),
     r"send: source_target_pairs must be \(source, target\) pairs, got \[0, 1\]"),
    (lambda t, x: lax.get_tuple_element(x, 0), (TOKEN, F2),
     r"get_tuple_element: operand must be a tuple, got f32\[2\]\{0\}"),
    (lambda t, x: lax.get_tuple_element(x, 2), (TOKEN, T2),
     r"get_tuple_element: index 2 is out of range for a tuple of 2 element\(s\)"),
    (lambda t, x: lax.get_tuple_element(x, 0.5), (TOKEN, T2),
     r"get_tuple_element: index must be an int"),
    (lambda t, x: lax.tuple(x), (TOKEN, F2),
     r"tuple: elements must be a list or tuple of values"),
    (lambda t, x: lax.composite_call(lambda a: a, x, name=""), (TOKEN, F2),
     r"composite_call: name must be a non-empty string"),
    (lambda t, x: lax.composite_call(lambda a: a, x, name="n", version=-1), (TOKEN, F2),
     r"composite_call: version must be a non-negative int, got -1"),
])
def test_invalid_calls_raise_when_tracing(fn, args, message):
    with pytest.raises(ShapeError, match=message):
        make_graph(fn)(*args)


# --------------------------------------------------------------------------
# the family's StableHLO conformance cases, eagerly and traced
# --------------------------------------------------------------------------

CASES = [c for c in load_cases() if c["op"] in ("composite", "optimization_barrier", "tuple",
                                                 "infeed", "send_recv")]
# infeed.mlir's queue (@infeed_queue0, @infeed_queue1) is not in the case file: these are
# its values, which infeed must return in order.
INFEED_QUEUE = [np.array([[1, 2], [3, 4]]), np.array([[5, 6], [7, 8]])]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
@pytest.mark.parametrize("wrap", [None, traced], ids=["eager", "traced"])
def test_conformance_case(case, wrap):
    if case["op"] == "infeed":
        for value in INFEED_QUEUE:
            lax.infeed_queue.put(value)
    check_results(case, run_case_locally(case, wrap))
    assert not lax.channels or all(len(q) == 0 for q in lax.channels.values())


# ------------------------------------------------- send / recv between processes

RING3 = [(0, 1), (1, 2), (2, 0)]


def _ring_exchange(x):
    token = lax.send(x * 2.0, lax.create_token(), 4, source_target_pairs=RING3)
    got, token = lax.recv(token, "f32[2]", 4, source_target_pairs=RING3)
    token = lax.send(x, token, 5, source_target_pairs=[(2, 0)])
    extra, _ = lax.recv(token, "f32[2]", 5, source_target_pairs=[(2, 0)])
    return got, extra


def test_send_recv_with_pairs_are_point_to_point_messages():
    from numxla.primitives.collectives import run_replicated
    xs = [np.full(2, i + 1, np.float32) for i in range(3)]
    outs = run_replicated(_ring_exchange, xs)
    for i, (got, extra) in enumerate(outs):
        np.testing.assert_array_equal(got, xs[(i - 1) % 3] * 2)   # from the previous process
        np.testing.assert_array_equal(extra, xs[2] if i == 0 else np.zeros(2))  # no target: 0


def test_send_recv_with_pairs_on_one_process():
    x = np.array([1.5, -2.0], np.float32)

    def loop_back(v):
        token = lax.send(v, lax.create_token(), 6, source_target_pairs=[(0, 0)])
        got, token = lax.recv(token, "f32[2]", 6, source_target_pairs=[(0, 0)])
        nothing, _ = lax.recv(token, "f32[2]", 7, source_target_pairs=[])
        return got, nothing

    got, nothing = loop_back(x)
    np.testing.assert_array_equal(got, x)
    np.testing.assert_array_equal(nothing, np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=r"send on channel 6: source_target_pairs \(\(0, 1\),\) "
                                         r"name process\(es\) \[1\] beyond the 1 process"):
        lax.send(x, lax.create_token(), 6, source_target_pairs=[(0, 1)])


def test_unreceived_and_missing_messages_are_errors():
    from numxla.primitives.collectives import run_replicated
    xs = [np.ones(2, np.float32)] * 2
    with pytest.raises(lax.HostTransferError, match="messages never received: 1 on channel 4 "
                                                    "from replica 0 to replica 1"):
        run_replicated(lambda x: lax.send(x, lax.create_token(), 4,
                                          source_target_pairs=[(0, 1)]), xs)
    with pytest.raises(lax.HostTransferError, match="recv: the channel 4 from replica 1 to "
                                                    "replica 0 is empty"):
        run_replicated(lambda x: lax.recv(lax.create_token(), "f32[2]", 4,
                                          source_target_pairs=[(1, 0)])[0], xs)
