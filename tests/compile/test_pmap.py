"""pmap on the threads backend: collectives of compiled programs exchange
data between replicas, bit for bit as the reference semantics
(``run_replicated``) compute them; faults end every replica with an error."""
from __future__ import annotations

import time

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff import grad
from numxla.compile import CollectiveError, pmap
from numxla.tracer.core import ShapeError

rng = np.random.default_rng(11)


def _reference(fn, per_replica):
    outs = lax.run_replicated(fn, [tuple(a[i] for a in per_replica) for i in range(len(
        per_replica[0]))])
    return [np.stack([np.asarray(o[j]) for o in outs]) for j in range(len(outs[0]))]


def _groups(n):
    """Several replica_groups layouts for n replicas: all, pairs, strided."""
    layouts = [None]
    if n >= 4:
        layouts.append([[i, i + 1] for i in range(0, n, 2)])
        layouts.append([list(range(s, n, 2)) for s in range(2)])
    return layouts


def _program(n, groups):
    size = n if groups is None else len(groups[0])

    def fn(x, y):
        return (lax.all_reduce(x, lax.add, replica_groups=groups),
                lax.all_reduce(y, lax.max, replica_groups=groups),
                lax.all_gather(x, 0, shard_count=size, replica_groups=groups),
                lax.all_to_all(y, 0, 1, size, replica_groups=groups),
                lax.reduce_scatter(y, lax.add, 0, size, replica_groups=groups),
                lax.collective_permute(x, [(i, (i + 1) % n) for i in range(n)]),
                lax.collective_broadcast(x, replica_groups=groups),
                lax.replica_id())
    return fn


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_every_collective_matches_the_reference(n):
    for groups in _groups(n):
        size = n if groups is None else len(groups[0])
        x = rng.standard_normal((n, 3, 2)).astype(np.float32)
        y = rng.integers(-50, 50, (n, 2 * size, size)).astype(np.int32)
        fn = _program(n, groups)
        got = pmap(fn, timeout=30)(x, y)
        want = _reference(fn, [x, y])
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w, err_msg=f"{n} replicas, groups {groups}")


def _partition_program(v):
    """Collectives of a program of replicas x 2 partitions, grouped by channel_id
    and use_global_device_ids as XLA does."""
    return (lax.all_reduce(v, lax.add),                                  # cross-replica
            lax.all_reduce(v, lax.add, channel_id=1),                    # cross replica+partition
            lax.all_reduce(v, lax.add, replica_groups=[[0, 3], [1, 2]], channel_id=1,
                           use_global_device_ids=True),                  # flattened ids
            lax.all_gather(v, 0, shard_count=4, channel_id=1),           # all 4 processes
            lax.collective_permute(v, [(0, 1), (1, 0)], channel_id=1),   # between partitions
            lax.replica_id(), lax.partition_id())


def test_partitions():
    # 2 replicas x 2 partitions: slice i runs as replica i // 2, partition i % 2
    x = rng.standard_normal((4, 3)).astype(np.float32)
    fn = _partition_program
    got = pmap(fn, num_partitions=2, timeout=30)(x)
    want = lax.run_replicated(fn, list(x), num_replicas=2, num_partitions=2)
    for j, g in enumerate(got):
        np.testing.assert_array_equal(g, np.stack([np.asarray(w[j]) for w in want]))
    # independently: ids, and the cross-replica sum pairs processes of one partition
    np.testing.assert_array_equal(got[5], [0, 0, 1, 1])
    np.testing.assert_array_equal(got[6], [0, 1, 0, 1])
    np.testing.assert_allclose(got[0], np.stack([x[0] + x[2], x[1] + x[3]] * 2), rtol=1e-6)
    np.testing.assert_allclose(got[2][0], x[0] + x[3], rtol=1e-6)
    np.testing.assert_array_equal(got[4], x[[1, 0, 3, 2]])
    with pytest.raises(ValueError, match="3 processes do not split into num_partitions=2"):
        pmap(fn, num_partitions=2)(x[:3])


def test_axis_name_spellings():
    x = rng.standard_normal((4, 5))

    def fn(v):
        return (lax.psum(v, "i"), lax.pmean(v, "i"), lax.pmax(v, "i"), lax.pmin(v, "i"),
                lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]), lax.axis_index("i"))

    s, m, mx, mn, perm, idx = pmap(fn, axis_name="i")(x)
    np.testing.assert_allclose(s, np.broadcast_to(x.sum(0), x.shape), rtol=1e-12)
    np.testing.assert_allclose(m, np.broadcast_to(x.mean(0), x.shape), rtol=1e-12)
    np.testing.assert_array_equal(mx, np.broadcast_to(x.max(0), x.shape))
    np.testing.assert_array_equal(mn, np.broadcast_to(x.min(0), x.shape))
    np.testing.assert_array_equal(perm, np.roll(x, 1, axis=0))
    np.testing.assert_array_equal(idx, np.arange(4, dtype=np.int32))
    with pytest.raises(NameError, match="unbound axis name 'j'"):
        pmap(lambda v: lax.psum(v, "j"), axis_name="i")(x)

    stacked, tiled, inner = pmap(lambda v: (lax.all_gather(v, "i"),
                                            lax.all_gather(v, "i", tiled=True),
                                            lax.all_gather(v, "i", axis=1)), axis_name="i")(x)
    for r in range(4):
        np.testing.assert_array_equal(stacked[r], x)
        np.testing.assert_array_equal(tiled[r], x.ravel())
        np.testing.assert_array_equal(inner[r], x.T)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("shape, split, concat", [((3, 5), 0, 0), ((3, 5), 0, 2), ((3, 5), 1, 0),
                                                  ((5, 3), 2, 1), ((3, 5), -3, -1)])
def test_all_to_all_by_axis_name(n, shape, split, concat):
    # JAX's all_to_all: slice j of split_axis goes to replica j, which stacks
    # what it receives along concat_axis (of the result, which lacks split_axis)
    full = list(shape)
    full.insert(split % 3, n)
    x = rng.standard_normal([n] + full)
    got = pmap(lambda v: lax.all_to_all(v, "i", split, concat), axis_name="i")(x)
    for j in range(n):
        want = np.stack([x[d].take(j, axis=split) for d in range(n)], axis=concat)
        np.testing.assert_array_equal(got[j], want)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("split, concat", [(0, 1), (1, 0), (1, 1)])
def test_all_to_all_by_axis_name_tiled(n, split, concat):
    x = rng.standard_normal((n, 2 * n, 4 * n))
    got = pmap(lambda v: lax.all_to_all(v, "i", split, concat, tiled=True), axis_name="i")(x)
    for j in range(n):
        want = np.concatenate([np.split(x[d], n, axis=split)[j] for d in range(n)], axis=concat)
        np.testing.assert_array_equal(got[j], want)


def test_all_to_all_by_axis_name_checks_the_split_size():
    x = np.ones((4, 3, 6))
    with pytest.raises(ShapeError, match=r"all_to_all: split_axis 0 .* has size 3, not the 4 "):
        pmap(lambda v: lax.all_to_all(v, "i", 0, 0), axis_name="i")(x)
    with pytest.raises(ShapeError, match=r"all_to_all: split_axis 1 .* size 6, not a multiple"):
        pmap(lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True), axis_name="i")(x)


def test_psum_of_a_pytree_is_one_allreduce():
    # JAX's psum binds every leaf at once: one exchange for all the gradients
    from numxla.primitives.collectives import all_reduce_p, axis_name_bound
    from numxla.tracer.tracing import trace_pytree
    tree = {"w": rng.standard_normal((4, 3)), "n": rng.integers(0, 9, (4, 2)).astype(np.int32)}
    with axis_name_bound("i", 4):
        graph, _ = trace_pytree(lambda t: lax.psum(t, "i"), ({"w": tree["w"][0],
                                                              "n": tree["n"][0]},))
    assert [eq.primitive for eq in graph.equations] == [all_reduce_p]
    got = pmap(lambda t: lax.pmean(t, "i"), axis_name="i")(tree)
    np.testing.assert_allclose(got["w"], np.broadcast_to(tree["w"].mean(0), (4, 3)), rtol=1e-12)
    np.testing.assert_array_equal(got["n"], np.broadcast_to(tree["n"].sum(0) // 4, (4, 2)))


def test_in_axes_and_out_axes():
    # parameters given whole to every replica (None), data split along axis 1,
    # results stacked along axis 1 or, replicated, given once (None)
    w = rng.standard_normal((2, 3))
    x = rng.standard_normal((3, 4))
    f = pmap(lambda w, x: (w @ x, lax.psum(xnp.sum(x), "i")), axis_name="i",
             in_axes=(None, 1), out_axes=(1, None))
    product, total = f(w, x)
    np.testing.assert_allclose(product, w @ x, rtol=1e-12)
    np.testing.assert_allclose(total, x.sum(), rtol=1e-12)

    # a prefix pytree: a dict argument with one mapped and one whole entry
    params = {"scale": np.float64(3.0), "rows": rng.standard_normal((2, 5))}
    got = pmap(lambda p: p["rows"] * p["scale"], in_axes=({"scale": None, "rows": 0},))(params)
    np.testing.assert_allclose(got, params["rows"] * 3.0, rtol=1e-12)

    # data-parallel gradients with parameters broadcast: each replica's own shard
    def loss(v, a, b):
        return xnp.sum((a @ v - b) ** 2)

    a, b, v = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6)), rng.standard_normal(3)
    grads = pmap(grad(loss), in_axes=(None, 0, 0))(v, a, b)
    for r in range(2):
        np.testing.assert_allclose(grads[r], 2 * a[r].T @ (a[r] @ v - b[r]), rtol=1e-10)

    with pytest.raises(ValueError, match="pmap: in_axes has 1 entries for 2 positional"):
        pmap(lambda w, x: x, in_axes=(0,))(w, x)
    with pytest.raises(ValueError, match=r"pmap: in_axes 2 is out of range for an argument of "
                                         r"shape \(3, 4\)"):
        pmap(lambda x: x, in_axes=2)(x)
    with pytest.raises(ValueError, match=r"pmap: the arguments' mapped axes have sizes \[3, 4\]"):
        pmap(lambda x, y: x, in_axes=(0, 1))(x, x)
    with pytest.raises(ValueError, match=r"pmap: in_axes=\(0, 0\) does not match"):
        pmap(lambda p: p, in_axes=((0, 0),))({"a": x})


def test_collectives_inside_a_loop():
    x = rng.standard_normal((2, 3))

    def fn(v):
        return lax.fori_loop(0, 3, lambda i, c: lax.psum(c, "r") * 0.5, v)

    out = pmap(fn, axis_name="r")(x)
    expected = x.copy()
    for _ in range(3):
        expected = np.broadcast_to(expected.sum(0) * 0.5, x.shape)
    np.testing.assert_allclose(out, expected, rtol=1e-12)


def test_allreduce_results_shared_by_a_group_stay_valid_while_live():
    # AllReduce results that die before the equation runs again are written
    # once per group into a buffer the members share: two AllReduces of the
    # same shape live at once must not share one, nor iterations of a loop
    x = np.random.default_rng(5).standard_normal((4, 3, 40000)).astype(np.float32)

    def fn(v):
        a = lax.psum(v, "i")
        b = lax.psum(v * 2.0, "i")
        c = lax.fori_loop(0, 3, lambda k, c: lax.psum(c, "i") * 0.25 + a, b)
        return xnp.sum(a * b + c, axis=1)

    a = x.sum(0)
    b = 2 * a
    c = b
    for _ in range(3):
        c = 4 * c * 0.25 + a
    want = np.broadcast_to((a * b + c).sum(axis=1), (4, 3))
    for _ in range(2):  # the second run reuses the first's buffers
        np.testing.assert_allclose(pmap(fn, axis_name="i")(x), want, rtol=1e-4)


def test_shared_allreduce_results_are_copied_when_carried():
    # an AllReduce result shared by the group, carried by a loop through a
    # call's tuple, must be copied: the next round writes the shared buffer
    x = np.ones((4, 20000), np.float32)

    def body(i, c):
        return lax.get_tuple_element(lax.call(lambda c: lax.tuple([lax.psum(c, "i")]), c), 0)

    got = pmap(lambda v: lax.fori_loop(0, 2, body, v), axis_name="i")(x)
    np.testing.assert_array_equal(got, np.full_like(x, 16.0))


def test_replicas_on_different_branches_meet_at_their_allreduces():
    # replica 0 runs one branch, replica 1 the other: their AllReduces meet
    # in order, and each keeps its first result while the second runs
    x = np.random.default_rng(6).standard_normal((2, 30000)).astype(np.float32)

    def first(a):
        t = lax.psum(a, "i")
        u = lax.psum(a + 1.0, "i")
        return t * u

    def second(a):
        t = lax.psum(a * 3.0, "i")
        u = lax.psum(a - 1.0, "i")
        return t + u

    fn = lambda v: lax.cond(lax.eq(lax.axis_index("i"), 0), first, second, v)  # noqa: E731
    t = x[0] + 3 * x[1]
    u = (x[0] + 1) + (x[1] - 1)
    got = pmap(fn, axis_name="i")(x)
    np.testing.assert_allclose(got, np.stack([t * u, t + u]), rtol=1e-4, atol=1e-4)

    # replica 0 runs one AllReduce twice (in a loop) while replica 1 keeps
    # the result of its first, different one across its second
    def looped(a):
        step = lambda k, c: c + lax.psum(a * lax.convert_element_type(k + 1, np.float32), "i")  # noqa: E731,E501
        return lax.fori_loop(0, 2, step, a)

    def two(a):
        q = lax.psum(a, "i")
        return q * 3.0 + lax.psum(a * 2.0, "i")

    fn = lambda v: lax.cond(lax.eq(lax.axis_index("i"), 0), looped, two, v)  # noqa: E731
    s1, s2 = x[0] + x[1], 2 * x[0] + 2 * x[1]
    got = pmap(fn, axis_name="i")(x)
    np.testing.assert_allclose(got, np.stack([x[0] + s1 + s2, s1 * 3 + s2]), rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------- send / recv

def _ring_program(n: int):
    """Send/recv by channel with source_target_pairs: a ring shift repeated
    in a loop (each step receives the previous replica's carry), and one
    message from the last replica to the first on another channel."""
    ring = [(i, (i + 1) % n) for i in range(n)]

    def step(k, carry):
        token = lax.send(carry, lax.create_token(), 5, source_target_pairs=ring)
        got, _ = lax.recv(token, "f32[3]", 5, source_target_pairs=ring)
        return got * 2.0 + lax.convert_element_type(k, np.float32)

    def fn(x):
        shifted = lax.fori_loop(0, 3, step, x)
        token = lax.send(x + 1.0, lax.create_token(), 9, source_target_pairs=[(n - 1, 0)])
        last, _ = lax.recv(token, "f32[3]", 9, source_target_pairs=[(n - 1, 0)])
        return shifted, last
    return fn


def _ring_reference(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    carry = x.copy()
    for k in range(3):
        carry = np.roll(carry, 1, axis=0) * 2 + k
    last = np.zeros_like(x)
    last[0] = x[-1] + 1
    return carry, last


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_send_recv_by_channel_between_replicas(n):
    x = rng.integers(-9, 9, (n, 3)).astype(np.float32)
    got = pmap(_ring_program(n))(x)
    for g, w in zip(got, _ring_reference(x)):
        np.testing.assert_array_equal(g, w)


def test_send_recv_faults_are_errors():
    x = np.ones((2, 3), np.float32)
    lonely_recv = lambda v: lax.recv(lax.create_token(), "f32[3]", 3,  # noqa: E731
                                     source_target_pairs=[(0, 1)])[0]
    with pytest.raises(CollectiveError, match=r"recv on channel 3 \(replica 1 from replica 0\)"
                                              r": replica 0 finished without sending it"):
        pmap(lonely_recv, timeout=20)(x)
    lonely_send = lambda v: lax.send(v, lax.create_token(), 3,  # noqa: E731
                                     source_target_pairs=[(0, 1)])
    with pytest.raises(CollectiveError, match="messages never received: 1 on channel 3 from "
                                              "replica 0 to replica 1"):
        pmap(lonely_send)(x)
    with pytest.raises(ValueError, match=r"source_target_pairs \(\(0, 2\),\) name process\(es\) "
                                         r"\[2\] beyond the 2 of the program"):
        pmap(lambda v: lax.send(v, lax.create_token(), 3, source_target_pairs=[(0, 2)]))(x)


def test_collectives_after_a_loop_of_collectives():
    # host calls with arguments after a loop holding one with results: Numba
    # mis-compiles them inline, so each lives in a jitted helper of its own
    x = rng.standard_normal((2, 3))
    got = pmap(lambda v: lax.psum(lax.fori_loop(0, 3, lambda i, c: lax.psum(c, "i") * 0.5, v),
                                  "i"), axis_name="i")(x)
    np.testing.assert_allclose(got, np.broadcast_to(x.sum(0), x.shape), rtol=1e-12)


def test_mismatched_collective_counts_fail_fast():
    x = np.ones((2, 3), np.float32)

    def fn(v):
        twice = lax.eq(lax.replica_id(), np.uint32(0))
        return lax.cond(twice, lambda a: lax.psum(lax.psum(a, "i"), "i"),
                        lambda a: lax.psum(a, "i"), v)

    start = time.perf_counter()
    with pytest.raises(CollectiveError, match="all_reduce.*not every process reaches it"):
        pmap(fn, axis_name="i", timeout=20)(x)
    assert time.perf_counter() - start < 15


def test_different_collectives_and_timeouts_are_errors():
    x = np.ones((2, 4), np.float32)

    def different(v):
        first = lax.eq(lax.replica_id(), np.uint32(0))
        return lax.cond(first, lambda a: lax.psum(a, "i"),
                        lambda a: lax.pmax(a, "i"), v)

    with pytest.raises(CollectiveError, match="all_reduce with different parameters"):
        pmap(different, axis_name="i", timeout=20)(x)

    def other_op(v):
        first = lax.eq(lax.replica_id(), np.uint32(0))
        return lax.cond(first, lambda a: lax.psum(a, "i"),
                        lambda a: lax.ppermute(a, "i", [(0, 1), (1, 0)]), v)

    with pytest.raises(CollectiveError, match="different collectives"):
        pmap(other_op, axis_name="i", timeout=20)(x)


def test_a_replica_that_never_arrives_times_out():
    from numxla.primitives import side_effects as se

    def slow(v):
        time.sleep(float(np.asarray(v).ravel()[0]))
        return v

    se.register_custom_call_target("test_pmap_slow", slow)
    x = np.array([[0.0], [3.0]], np.float32)          # replica 1 sleeps 3 s

    def fn(v):
        return lax.psum(lax.custom_call("test_pmap_slow", [v], result_shapes="f32[1]"), "i")

    start = time.perf_counter()
    with pytest.raises(CollectiveError, match=r"timed out after 0.5 s.*replica 1 not arrived"):
        pmap(fn, axis_name="i", timeout=0.5)(x)
    assert time.perf_counter() - start < 10


def test_a_replica_that_raises_ends_the_run():
    from numxla.primitives import side_effects as se

    def boom(v):
        if float(np.asarray(v).ravel()[0]) > 0:
            raise ValueError("replica data rejected")
        return v

    se.register_custom_call_target("test_pmap_boom", boom)
    x = np.stack([-np.ones(3), np.ones(3)]).astype(np.float32)

    def fn(v):
        checked = lax.custom_call("test_pmap_boom", [v], result_shapes="f32[3]")
        return lax.psum(checked, "i")

    start = time.perf_counter()
    with pytest.raises(Exception, match="replica data rejected"):
        pmap(fn, axis_name="i", timeout=20)(x)
    assert time.perf_counter() - start < 15


def test_data_parallel_gradients_equal_the_full_batch_gradient():
    w = rng.standard_normal((4, 3))
    x = rng.standard_normal((8, 4))
    y = rng.standard_normal((8, 3))

    def loss(w, x, y):
        return xnp.mean((xnp.tanh(x @ w) - y) ** 2)

    def step(w, x, y):
        return lax.pmean(grad(loss)(w, x, y), "batch")

    shards = pmap(step, axis_name="batch")(np.stack([w, w]), x.reshape(2, 4, 4),
                                           y.reshape(2, 4, 3))
    np.testing.assert_array_equal(shards[0], shards[1])     # bit-identical on every replica
    np.testing.assert_allclose(shards[0], grad(loss)(w, x, y), rtol=1e-12, atol=1e-14)


def test_data_parallel_training_matches_one_replica_on_the_whole_batch():
    import data_parallel
    result = data_parallel.train(replicas=2, steps=3, verbose=False)   # asserts bit-identity
    np.testing.assert_allclose(result["parallel"], result["single"], rtol=1e-5)
    assert result["max_param_gap"] < 1e-5
