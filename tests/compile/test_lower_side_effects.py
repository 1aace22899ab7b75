"""Compiled tokens, tuples and side effects (compile/lowering/side_effects.py)
and one-process collectives (compile/lowering/collectives.py) against the
reference semantics: after_all/create_token, optimization_barrier,
tuple/get_tuple_element, composite_call; the host callbacks infeed, outfeed,
send, recv and custom_call (calls of Python with the GIL) with arrays and tuples,
int/float/bool values and non-default layouts; every collective on the 1x1
process grid, and its errors.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.compile  # noqa: F401
import numxla.compile.lowering.collectives  # noqa: F401  (registers the lowerings)
import numxla.compile.lowering.control_flow  # noqa: F401
import numxla.compile.lowering.side_effects  # noqa: F401
import numxla.primitives as lax
from numxla.compile import device_put, jit
from numxla.primitives import side_effects as se
from numxla.tracer import pytree

from .util import check_all

rng = np.random.default_rng(5)


def _leaves(tree):
    """Pytree leaves, with tuple values (one leaf each) opened up."""
    out = []
    for leaf in pytree.tree_leaves(tree):
        if isinstance(leaf, se.TupleValue):
            out += _leaves(list(leaf))
        else:
            out.append(np.array("token") if isinstance(leaf, se.Token) else leaf)
    return out


def assert_same(got, want, where=""):
    check_all(_leaves(got), _leaves(want), where, exact=True)


# --------------------------------------------------------------------------
# tokens, tuples, barriers, composites (no host calls)
# --------------------------------------------------------------------------

def plumbing(x, y, b):
    """x: f32[3,4], y: s32[5], b: bool[2]."""
    t0 = lax.create_token()
    t1 = lax.after_all(t0, lax.after_all(), t0)
    tup = lax.tuple([x, y, t1, lax.tuple([b, y * 2])])
    inner = lax.get_tuple_element(tup, 3)
    e0 = lax.get_tuple_element(tup, 0)
    e1 = lax.get_tuple_element(inner, 1)
    e2 = lax.get_tuple_element(inner, 0)
    a, (c, d) = lax.optimization_barrier((x * 2.0, (y, b)))
    comp = lax.composite_call(lambda u, v: (u + 1.0, v * v), x, y, name="my.op",
                              attributes={"k": 2}, version=1)
    # tuples and tokens through control flow
    loop = lax.while_loop(lambda s: s[0] < 3,
                          lambda s: (s[0] + 1, lax.after_all(s[1]),
                                     lax.tuple([lax.get_tuple_element(s[2], 1),
                                                lax.get_tuple_element(s[2], 0)])),
                          (0, t1, lax.tuple([x, x * 0.5])))
    picked = lax.cond(b[0], lambda t: lax.get_tuple_element(t, 0),
                      lambda t: lax.get_tuple_element(t, 1) + 1.0, loop[2])
    return e0, e1, e2, a, c, d, comp, lax.get_tuple_element(loop[2], 0), picked


def test_tokens_tuples_barriers():
    args = (rng.standard_normal((3, 4)).astype(np.float32), np.arange(5, dtype=np.int32),
            np.array([True, False]))
    got = jit(plumbing)(*args)
    assert_same(got, plumbing(*args))
    # aliases of the inputs come back in buffers of their own
    assert not np.shares_memory(np.asarray(got[0]), args[0])
    assert not np.shares_memory(np.asarray(got[4]), args[1])
    laid = jit(plumbing, in_layouts=("{0,1:T(2,2)}", None, None))
    assert_same(laid(*args), plumbing(*args), "layouts")


# --------------------------------------------------------------------------
# host callbacks
# --------------------------------------------------------------------------

def _target(p, q, *, scale=1):
    return p + q.astype(np.float32) * scale, (p > 0)


def transfers(x, y, b):
    """x: f32[3,4], y: s32[4], b: bool[3]."""
    tok = lax.create_token()
    v, tok = lax.infeed(tok, "f32[2,3]")
    pair, tok = lax.infeed(tok, "(s32[2], pred[3])")
    w, flags = lax.get_tuple_element(pair, 0), lax.get_tuple_element(pair, 1)
    tok = lax.outfeed(x * 2.0 + v[0, 0], tok)
    tok = lax.outfeed(lax.tuple([y, b]), tok)
    tok = lax.send(x, tok, 3)
    tok = lax.send(y, tok, 3)
    r1, tok = lax.recv(tok, "f32[3,4]", 3)
    r2, tok = lax.recv(tok, "s32[4]", 3)
    c1, c2 = lax.custom_call("test.target", [x, lax.broadcast_in_dim(y, (3, 4), (1,))],
                             ["f32[3,4]", "pred[3,4]"], api_version="TYPED_FFI",
                             backend_config={"scale": 10})
    # host calls inside a loop run once per iteration, in order
    _, last = lax.fori_loop(0, 3, lambda i, c: (lax.outfeed(i, c[0]), i * 10), (tok, 0))
    return v, w, flags, r1, r2, c1, c2, last


def _run_transfers(fn, args):
    se.infeed_queue.clear()
    se.outfeed_queue.clear()
    se.infeed_queue.put(np.arange(6, dtype=np.float32).reshape(2, 3) + 0.5)
    se.infeed_queue.put(se.TupleValue((np.array([4, -5], np.int32),
                                       np.array([True, False, True]))))
    out = fn(*args)
    fed = [se.outfeed_queue.get() for _ in range(len(se.outfeed_queue))]
    assert len(se.infeed_queue) == 0 and len(se.channels[3]) == 0
    return out, fed


def test_host_callbacks():
    se.register_custom_call_target("test.target", _target)
    args = (rng.standard_normal((3, 4)).astype(np.float32), np.arange(4, dtype=np.int32),
            np.array([True, False, False]))
    want = _run_transfers(transfers, args)
    got = _run_transfers(jit(transfers), args)
    assert_same(got, want)
    got = _run_transfers(jit(transfers, in_layouts=("{0,1:T(2,2)}", None, None)), args)
    assert_same(got, want, "layouts")
    # an empty queue raises the reference's error from inside compiled code
    se.infeed_queue.clear()
    with pytest.raises(se.HostTransferError, match="infeed"):
        jit(lambda: lax.infeed(lax.create_token(), "f32[2]")[0])()


# --------------------------------------------------------------------------
# collectives on one process
# --------------------------------------------------------------------------

def collectives(x, y):
    """x: f32[4,6], y: s32[4]."""
    return (lax.all_reduce(x, lax.add), lax.all_reduce([x, y], lax.max, replica_groups=[[0]]),
            lax.cross_replica_sum(y),
            lax.all_gather(x, 1, shard_count=1, replica_groups=[[0]]),
            lax.all_to_all(x, 0, 1, 1, replica_groups=[[0]]),
            lax.reduce_scatter(y, lax.add, 0, 1, replica_groups=[[0]]),
            lax.collective_permute(x, [(0, 0)]), lax.collective_permute(y, []),
            lax.collective_broadcast(x), lax.collective_broadcast(y, replica_groups=[[0]]),
            lax.replica_id(), lax.partition_id())


def test_collectives_one_process():
    args = (rng.standard_normal((4, 6)).astype(np.float32), np.arange(4, dtype=np.int32))
    got = jit(collectives)(*args)
    assert_same(got, collectives(*args))
    laid = jit(collectives, in_layouts=("{0,1:T(2,2)}", None))
    assert_same(laid(device_put(args[0], "{0,1:T(2,2)}"), args[1]), collectives(*args), "layouts")
    for out in pytree.tree_leaves(got)[:2]:
        assert not np.shares_memory(np.asarray(out), args[0])
    with pytest.raises(ValueError, match="collective_permute"):
        jit(lambda a: lax.collective_permute(a, [(0, 1)]))(args[1])
    with pytest.raises(ValueError, match="all_reduce"):
        jit(lambda a: lax.all_reduce(a, lax.add, replica_groups=[[0, 1]]))(args[1])


# --------------------------------------------------------------------------
# tokens and tuples as arguments and results of a compiled function
# --------------------------------------------------------------------------

def test_token_and_tuple_arguments_and_results():
    def f(tok, pair, x):
        a = lax.get_tuple_element(pair, 0)
        b = lax.get_tuple_element(lax.get_tuple_element(pair, 1), 0)
        return lax.after_all(tok), lax.tuple([x + a, lax.tuple([b, tok])]), pair, a

    x = rng.standard_normal(3).astype(np.float32)
    pair = se.TupleValue((x * 2, se.TupleValue((np.arange(2, dtype=np.int32), se.Token()))))
    got = jit(f)(se.Token(), pair, x)
    want = f(se.Token(), pair, x)
    assert isinstance(got[0], se.Token) and isinstance(got[1], se.TupleValue)
    assert isinstance(got[1][1][1], se.Token)
    assert_same(got, want)
    # results that are (elements of) arguments come back in buffers of their own
    assert not np.shares_memory(np.asarray(got[3]), pair[0])
    assert not np.shares_memory(np.asarray(got[2][0]), pair[0])
