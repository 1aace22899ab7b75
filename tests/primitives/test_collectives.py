"""Collectives: the document's multi-replica examples, shape errors at trace
time, process groups on replica x partition grids, and properties against
independent NumPy formulations (concatenate / split / sum over the members of
each group), run as SPMD programs with ``run_replicated``."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.primitives.collectives import ProcessGrid, run_replicated
from numxla.tracer import make_graph
from numxla.tracer.core import ShapeError, bf16_array
from numxla.tracer.shapes import bf16_from_f32, bf16_to_f32

RNG = np.random.default_rng(3)
F32 = np.float32


# -- the document's examples ------------------------------------------------------------

def test_all_gather_document_example():
    xs = [F32([1.0, 2.5]), F32([3.0, 5.25])]
    for out in run_replicated(lambda x: lax.all_gather(x, 0, 2), xs):
        np.testing.assert_array_equal(out, F32([1.0, 2.5, 3.0, 5.25]))


def test_all_reduce_document_example():
    xs = [F32([1.0, 2.5]), F32([3.0, 5.25])]
    for out in run_replicated(lambda x: lax.all_reduce(x, lax.add), xs):
        np.testing.assert_array_equal(out, F32([4.0, 7.75]))


def test_all_reduce_of_a_tuple_reduces_each_element():
    xs = [(F32([1.0, 2.5]), np.int32(3)), (F32([3.0, 5.25]), np.int32(4))]
    for vec, scalar in run_replicated(lambda x, n: lax.all_reduce((x, n), lax.add), xs):
        np.testing.assert_array_equal(vec, F32([4.0, 7.75]))
        assert scalar.dtype == np.int32 and scalar == 7


def test_all_to_all_document_example():
    """4 cores, f32[4,16] split along dimension 1 into four f32[4,4] blocks;
    core i concatenates the i-th blocks of cores 0..3 along dimension 0."""
    xs = [RNG.standard_normal((4, 16)).astype(F32) for _ in range(4)]
    outs = run_replicated(lambda x: lax.all_to_all(x, 1, 0, 4), xs)
    for i, out in enumerate(outs):
        assert out.shape == (16, 4)
        for j in range(4):
            np.testing.assert_array_equal(out[4 * j:4 * j + 4], xs[j][:, 4 * i:4 * i + 4])


def test_all_to_all_document_replica_groups():
    """replica_groups {1,2,3},{4,5,0}: blocks go and are concatenated in group order."""
    xs = [np.full((1, 3), r, np.int32) * 10 + np.arange(3, dtype=np.int32) for r in range(6)]
    outs = run_replicated(lambda x: lax.all_to_all(x, 1, 0, 3, [[1, 2, 3], [4, 5, 0]]), xs)
    for group in ([1, 2, 3], [4, 5, 0]):
        for j, receiver in enumerate(group):
            np.testing.assert_array_equal(outs[receiver][:, 0], [10 * s + j for s in group])


def test_reduce_scatter_document_example():
    xs = [F32([1.0, 2.25]), F32([3.0, 5.25])]
    outs = run_replicated(lambda x: lax.reduce_scatter(x, lax.add, 0, 2), xs)
    np.testing.assert_array_equal(outs[0], F32([4.0]))
    np.testing.assert_array_equal(outs[1], F32([7.5]))


def test_cross_replica_sum_document_example():
    xs = [F32([1.0, 2.5]), F32([3.0, 5.25])]
    for out in run_replicated(lax.cross_replica_sum, xs):
        np.testing.assert_array_equal(out, F32([4.0, 7.75]))


def test_collective_permute_targets_without_source_get_zeros():
    xs = [np.full((2,), 10 * (r + 1), np.int64) for r in range(3)]
    outs = run_replicated(lambda x: lax.collective_permute(x, [(0, 1), (1, 2)]), xs)
    assert [o.tolist() for o in outs] == [[0, 0], [10, 10], [20, 20]]


def test_replica_id_is_in_0_n():
    outs = run_replicated(lax.replica_id, num_replicas=4)
    assert [o.dtype for o in outs] == [np.uint32] * 4
    assert [int(o) for o in outs] == [0, 1, 2, 3]


def test_replica_and_partition_ids_on_a_grid():
    outs = run_replicated(lambda: (lax.replica_id(), lax.partition_id()), num_replicas=2,
                          num_partitions=3)
    assert [(int(r), int(p)) for r, p in outs] == list(itertools.product(range(2), range(3)))


def test_all_gather_with_replica_groups():
    xs = [np.array([r], np.int32) for r in range(4)]
    outs = run_replicated(lambda x: lax.all_gather(x, 0, replica_groups=[[0, 2], [1, 3]]), xs)
    assert [o.tolist() for o in outs] == [[0, 2], [1, 3], [0, 2], [1, 3]]


def test_collective_broadcast_from_first_member():
    xs = [np.array([r + 1.0], F32) for r in range(4)]
    outs = run_replicated(lambda x: lax.collective_broadcast(x, [[2, 1]]), xs)
    assert [o.tolist() for o in outs] == [[0.0], [3.0], [3.0], [0.0]]


# -- process groups of a replica x partition grid ---------------------------------------------

def _ids_gathered(channel_id, use_global, groups, R=2, P=2, shard_count=None):
    """Every process contributes its flat index; returns what each one gathers."""
    xs = [np.array([i], np.int32) for i in range(R * P)]
    outs = run_replicated(lambda x: lax.all_gather(x, 0, shard_count, groups, channel_id,
                                                   use_global), xs, R, P)
    return [o.tolist() for o in outs]


def test_cross_replica_groups_replicas_of_each_partition():
    # process (r, p) has index 2r + p
    assert _ids_gathered(None, False, [[1, 0]]) == [[2, 0], [3, 1], [2, 0], [3, 1]]


def test_cross_replica_and_partition_spans_all_partitions():
    assert _ids_gathered(1, False, [[1, 0]], shard_count=4) == [[2, 0, 3, 1]] * 4


def test_flattened_ids_name_processes():
    assert _ids_gathered(1, True, [[3, 0], [1, 2]]) == [[3, 0], [1, 2], [1, 2], [3, 0]]


def test_cross_partition_all_to_all():
    xs = [np.array([10 * i, 10 * i + 1], np.int32) for i in range(4)]
    outs = run_replicated(lambda x: lax.all_to_all(x, 0, 0, 2, [[0, 1]], channel_id=5), xs, 2, 2)
    assert [o.tolist() for o in outs] == [[0, 10], [1, 11], [20, 30], [21, 31]]


def test_grid_indices():
    grid = ProcessGrid(3, 2)
    assert [grid.ids(i) for i in range(grid.size)] == list(itertools.product(range(3), range(2)))
    assert grid.index(2, 1) == 5


# -- properties against NumPy -----------------------------------------------------------------

def _random_groups(n: int, size: int) -> list[list[int]]:
    perm = RNG.permutation(n).tolist()
    return [perm[i:i + size] for i in range(0, n, size)]


def _group_of(groups, r):
    return next(g for g in groups if r in g)


@pytest.mark.parametrize("trial", range(6))
def test_all_gather_all_reduce_reduce_scatter_match_numpy(trial):
    n, size = [(4, 2), (6, 3), (6, 2), (8, 4), (3, 3), (5, 1)][trial]
    groups = _random_groups(n, size)
    rank = int(RNG.integers(1, 4))
    shape = tuple(int(d) for d in RNG.integers(1, 4, size=rank))
    dim = int(RNG.integers(rank))
    shape = shape[:dim] + (size * shape[dim],) + shape[dim + 1:]
    xs = [RNG.integers(-50, 50, size=shape).astype(np.int32) for _ in range(n)]

    def program(x):
        return (lax.all_gather(x, dim, size, groups), lax.all_reduce(x, lax.max, groups),
                lax.reduce_scatter(x, lax.add, dim, size, groups))

    for r, (gathered, maxed, scattered) in enumerate(run_replicated(program, xs)):
        g = _group_of(groups, r)
        members = [xs[m] for m in g]
        np.testing.assert_array_equal(gathered, np.concatenate(members, axis=dim))
        np.testing.assert_array_equal(maxed, np.max(np.stack(members), axis=0))
        total = np.sum(np.stack(members), axis=0)
        np.testing.assert_array_equal(scattered,
                                      np.array_split(total, size, axis=dim)[g.index(r)])


@pytest.mark.parametrize("trial", range(6))
def test_all_to_all_matches_numpy(trial):
    n, size = [(4, 2), (6, 3), (4, 4), (6, 2), (2, 2), (3, 1)][trial]
    groups = _random_groups(n, size)
    rank = int(RNG.integers(1, 4))
    split, concat = (int(d) for d in RNG.integers(rank, size=2))
    shape = [int(d) for d in RNG.integers(1, 4, size=rank)]
    shape[split] *= size
    xs = [RNG.standard_normal(shape).astype(F32) for _ in range(n)]
    outs = run_replicated(lambda x: lax.all_to_all(x, split, concat, size, groups), xs)
    block = shape[split] // size
    for r, out in enumerate(outs):
        g = _group_of(groups, r)
        j = g.index(r)
        received = [np.take(xs[s], range(j * block, (j + 1) * block), axis=split) for s in g]
        np.testing.assert_array_equal(out, np.concatenate(received, axis=concat))


@pytest.mark.parametrize("trial", range(5))
def test_collective_permute_matches_numpy(trial):
    n = int(RNG.integers(2, 7))
    k = int(RNG.integers(0, n + 1))
    pairs = list(zip(RNG.permutation(n)[:k].tolist(), RNG.permutation(n)[:k].tolist()))
    xs = [RNG.integers(1, 9, size=(2, 3)).astype(np.uint8) for _ in range(n)]
    outs = run_replicated(lambda x: lax.collective_permute(x, pairs), xs)
    sources = {t: s for s, t in pairs}
    for r, out in enumerate(outs):
        np.testing.assert_array_equal(out, xs[sources[r]] if r in sources else np.zeros((2, 3)))


def test_all_reduce_with_a_general_computation():
    """A reducer with a constant runs element by element: ((x0*x1+1)*x2+1), group order."""
    xs = [np.array([1, 2, 3], np.int64), np.array([4, 5, 6], np.int64),
          np.array([-1, 0, 2], np.int64)]
    outs = run_replicated(lambda x: lax.all_reduce(x, lambda a, b: a * b + 1), xs)
    expected = (xs[0] * xs[1] + 1) * xs[2] + 1
    for out in outs:
        np.testing.assert_array_equal(out, expected)
    tiny = [np.array([2.0 ** -40]), np.array([3.0])]  # f64 all the way: no f32 rounding
    for out in run_replicated(lambda x: lax.all_reduce(x, lambda a, b: a + b + 1.0), tiny):
        assert out.dtype == np.float64 and out[0] == 4.0 + 2.0 ** -40


def test_all_reduce_bf16_rounds_like_bf16_adds():
    values = [F32([1.0, 256.0]), F32([2.0 ** -8, 1.0]), F32([2.0 ** -8, 1.0])]
    xs = [bf16_array(bf16_from_f32(v)) for v in values]
    outs = run_replicated(lambda x: lax.all_reduce(x, lax.add), xs)
    # 1 + 2^-8 rounds back to 1 in bf16 (8 significant bits), each step; so does 256 + 1
    np.testing.assert_array_equal(bf16_to_f32(np.asarray(outs[0])), F32([1.0, 256.0]))
    assert np.asarray(outs[0]).dtype == np.uint16


def test_pytree_arguments_and_results():
    xs = [{"a": np.float32(r), "b": np.array([r, r], np.int32)} for r in range(3)]
    outs = run_replicated(lambda d: {"sum": lax.cross_replica_sum(d["a"]),
                                     "ids": lax.all_gather(d["b"], 0, 3)}, xs)
    for out in outs:
        assert out["sum"] == 3.0 and out["ids"].tolist() == [0, 0, 1, 1, 2, 2]


# -- eager calls are programs of one process ---------------------------------------------------

def test_eager_calls_are_one_replica_programs():
    x = F32([1.5, -2.0])
    np.testing.assert_array_equal(lax.all_reduce(x, lax.add), x)
    np.testing.assert_array_equal(lax.all_gather(x, 0, 1), x)
    np.testing.assert_array_equal(lax.collective_permute(x, [(0, 0)]), x)
    np.testing.assert_array_equal(lax.collective_permute(x, []), F32([0, 0]))
    assert lax.replica_id() == 0 and lax.partition_id() == 0


def test_eager_collective_naming_other_replicas_fails():
    with pytest.raises(ValueError, match=r"all_gather: replica_groups \(\(0, 1\),\) name id 1, "
                                         r"but .* 1 replica\(s\)"):
        lax.all_gather(F32([1.0]), 0, 2, [[0, 1]])
    with pytest.raises(ValueError, match=r"all_gather: shard_count 2 does not match the 1 "
                                         r"processes"):
        lax.all_gather(F32([1.0]), 0, 2)


# -- run-time errors ----------------------------------------------------------------------------

def test_process_outside_every_group_fails():
    with pytest.raises(ValueError, match=r"all_reduce: process \(replica, partition\) \(2, 0\) "
                                         r"belongs to no group"):
        run_replicated(lambda x: lax.all_reduce(x, lax.add, [[0, 1]]), [F32(1)] * 3)


def test_processes_must_pass_alike_arguments():
    with pytest.raises(TypeError, match=r"process \(1, 0\) passes arguments of another"):
        run_replicated(lambda x: lax.cross_replica_sum(x), [F32([1]), np.float64([1])])
    with pytest.raises(ValueError, match="3 argument lists for 2 replica"):
        run_replicated(lambda x: x, [F32(1)] * 3, num_replicas=2)


def test_collective_inside_a_sub_computation_is_not_supported_yet():
    outs = run_replicated(lambda x: lax.call(lambda y: y + lax.replica_id(), x),
                          [np.uint32(10)] * 2)
    assert [int(o) for o in outs] == [10, 11]
    with pytest.raises(NotImplementedError, match="all_reduce: a collective inside a "
                                                  "sub-computation"):
        run_replicated(lambda x: lax.call(lambda y: lax.cross_replica_sum(y), x), [F32(1)] * 2)


# -- shape errors at trace time ----------------------------------------------------------------

X = np.zeros((4, 6), F32)


@pytest.mark.parametrize("call, message", [
    (lambda x: lax.all_gather(x, 2, 2), r"all_gather: all_gather_dimension 2 is out of range "
                                        r"for rank 2 \(operands: f32\[4,6\]"),
    (lambda x: lax.all_gather(x, 0, 3, [[0, 1], [2, 3]]),
     r"all_gather: every replica group must have shard_count = 3 members, got \(0, 1\)"),
    (lambda x: lax.all_gather(x, 0, replica_groups=[[0, 1], [1, 2]]),
     r"all_gather: replica_groups \(\(0, 1\), \(1, 2\)\) name id 1 more than once"),
    (lambda x: lax.all_gather(x, 0), r"all_gather: shard_count is required"),
    (lambda x: lax.all_gather(x, 0, 1, channel_id=0),
     r"all_gather: channel_id must be a positive integer or None, got 0"),
    (lambda x: lax.all_gather(x, 0, 1, use_global_device_ids=True),
     r"all_gather: use_global_device_ids requires a channel_id"),
    (lambda x: lax.all_reduce(x, lax.add, [[0, -1]]),
     r"all_reduce: replica_groups \(\(0, -1\),\) contains the negative id -1"),
    (lambda x: lax.all_reduce(x, lax.add, [[0], []]), r"all_reduce: .* contains an empty group"),
    (lambda x: lax.all_reduce(x, lambda a, b: lax.gt(a, b)),
     r"all_reduce: the computation must map two f32\[\] scalars to one, "
     r"got \(f32\[\], f32\[\]\) -> \(pred\[\]\)"),
    (lambda x: lax.all_to_all(x, 1, 0, 4),
     r"all_to_all: split_count 4 does not divide dimension 1 of size 6 \(split_dimension\)"),
    (lambda x: lax.all_to_all(x, 0, 2, 2),
     r"all_to_all: concat_dimension 2 is out of range for rank 2"),
    (lambda x: lax.all_to_all(x, 0, 1, 2, [[0, 1, 2]]),
     r"all_to_all: every replica group must have split_count = 2 members"),
    (lambda x: lax.reduce_scatter(x, lax.add, 1, 4),
     r"reduce_scatter: shard_count 4 does not divide dimension 1 of size 6 "
     r"\(scatter_dimension\)"),
    (lambda x: lax.reduce_scatter(x, lax.add, 0, 0), r"reduce_scatter: shard_count must be "
                                                     r"at least 1, got 0"),
    (lambda x: lax.collective_permute(x, [(0, 1), (0, 2)]),
     r"collective_permute: source_target_pairs \(\(0, 1\), \(0, 2\)\) repeat a source"),
    (lambda x: lax.collective_permute(x, [(0, 1), (2, 1)]), r"repeat a target"),
    (lambda x: lax.collective_permute(x, [(0, -1)]), r"contain a negative id"),
    (lambda x: lax.collective_permute(x, [0, 1]), r"must be \(source, target\) pairs"),
    (lambda x: lax.collective_broadcast(x, [[0, 1]], channel_id=-3),
     r"collective_broadcast: channel_id must be a positive integer or None, got -3"),
    (lambda x: lax.cross_replica_sum(x, [[0, 0]]), r"all_reduce: .* name id 0 more than once"),
])
def test_shape_errors(call, message):
    with pytest.raises(ShapeError, match=message):
        make_graph(call)(X)


# -- tracing -----------------------------------------------------------------------------------

def test_every_collective_traces_and_prints():
    def f(x):
        return (lax.all_reduce(x, lax.add, [[0, 1]]), lax.all_gather(x, 1, 2, channel_id=3),
                lax.all_to_all(x, 1, 0, 2), lax.reduce_scatter(x, lax.max, 0, 2),
                lax.collective_permute(x, [(0, 1), (1, 0)]), lax.collective_broadcast(x, [[1, 0]]),
                lax.cross_replica_sum(x), lax.replica_id(), lax.partition_id())
    text = make_graph(f)(X).as_text()
    for line in ["(f32[4,6]{1,0}) all_reduce(%x), computation={%all_reduce_computation}, "
                 "replica_groups={{0,1}}, use_global_device_ids=false",
                 "(f32[4,12]{1,0}) all_gather(%x), all_gather_dimension=1, shard_count=2, "
                 "replica_groups={}, channel_id=3",
                 "(f32[8,3]{1,0}) all_to_all(%x), split_dimension=1, concat_dimension=0, "
                 "split_count=2",
                 "(f32[2,6]{1,0}) reduce_scatter(%x), computation=",
                 "f32[4,6]{1,0} collective_permute(%x), source_target_pairs={{0,1},{1,0}}",
                 "f32[4,6]{1,0} collective_broadcast(%x), replica_groups={{1,0}}",
                 "u32[] replica_id()", "u32[] partition_id()"]:
        assert line in text, line
