"""Run by tests/compile/test_pmap_mpi.py under ``mpiexec -n N``: every
collective through pmap's MPI backend against the reference semantics,
axis-name spellings, send/recv by channel, and faults that must end every
rank with an error; under ``-n 2`` also 2 replicas per rank (4 replicas:
threads in a rank, MPI between), against the same program on 4 threads;
and one rank compiling each program for all.
Prints ``OK rank <r>`` when everything held on that rank."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numxla.primitives as lax  # noqa: E402
from numxla.compile import CollectiveError, pmap  # noqa: E402
from numxla.compile.kernel import compile_counts  # noqa: E402
from tests.compile.test_pmap import _groups, _partition_program, _program, _reference, \
    _ring_program, _ring_reference  # noqa: E402


def main() -> None:
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    n, rank = comm.size, comm.rank
    rng = np.random.default_rng(5)            # the same global inputs on every rank
    before = compile_counts()
    for groups in _groups(n):
        size = n if groups is None else len(groups[0])
        # small integers as floats: sums are exact whatever order MPI reduces in
        x = rng.integers(-20, 20, (n, 3, 2)).astype(np.float32)
        y = rng.integers(-50, 50, (n, 2 * size, size)).astype(np.int32)
        fn = _program(n, groups)
        got = pmap(fn, backend="mpi", timeout=60, global_arguments=True)(x, y)
        for g, w in zip(got, _reference(fn, [x, y])):
            assert g.dtype == w.dtype and np.array_equal(g, w), (groups, g, w)
    # each program's code was ready before its run: compiled by one rank (when
    # the disk cache lacked it), loaded from the cache by the others
    now = compile_counts()
    counts = comm.allgather({k: now[k] - before[k] for k in ("compiled_here", "loaded")})
    programs = len(_groups(n))
    assert all(c["compiled_here"] + c["loaded"] == programs for c in counts), counts
    assert sum(c["compiled_here"] for c in counts) <= programs, counts

    def mine(a):
        """This rank's replica's slice of a global value (its local shard)."""
        return a[rank:rank + 1]

    import numxla
    assert (numxla.process_index(), numxla.process_count()) == (rank, n)

    # local shards in, local results out (JAX's multi-process convention)
    v = rng.standard_normal((n, 4)).astype(np.float32)
    s, mx, idx = pmap(lambda a: (lax.psum(a, "i"), lax.pmax(a, "i"), lax.axis_index("i")),
                      axis_name="i", backend="mpi")(mine(v))
    assert s.shape == (1, 4) and np.allclose(s, v.sum(0)) and np.array_equal(mx, [v.max(0)])
    assert np.array_equal(idx, [rank])
    # ... and the whole batch on every rank as an explicit option
    s, idx = pmap(lambda a: (lax.psum(a, "i"), lax.axis_index("i")), axis_name="i",
                  backend="mpi", global_arguments=True)(v)
    assert np.allclose(s, np.broadcast_to(v.sum(0), v.shape)) and np.array_equal(idx, range(n))
    # shapes that differ between ranks: an error on every rank, not a hang
    try:
        pmap(lambda a: lax.psum(a, "i"), axis_name="i", backend="mpi")(
            np.ones((1, 3 + rank), np.float32))
    except ValueError as error:
        assert "the ranks called with different arguments" in str(error), error
    else:
        raise AssertionError("mismatched shapes did not raise")
    try:
        pmap(lambda a: a, backend="mpi")(v)   # the global batch without global_arguments
    except ValueError as error:
        assert "each rank passes its own replicas' slices" in str(error), error
    else:
        raise AssertionError("a global argument was taken as a local shard")

    if n == 4:  # 2 replicas x 2 partitions, one process per rank
        p = rng.integers(-20, 20, (4, 3)).astype(np.float32)  # exact sums in any order
        got = pmap(_partition_program, backend="mpi", num_partitions=2, timeout=60)(mine(p))
        want = lax.run_replicated(_partition_program, list(p), num_replicas=2, num_partitions=2)
        for j, g in enumerate(got):
            assert np.array_equal(g, [np.asarray(want[rank][j])]), j

    # in_axes / out_axes: a parameter whole on every rank, a replicated result not gathered
    w = rng.integers(-5, 5, 3).astype(np.float32)
    d = rng.integers(-5, 5, (n, 3)).astype(np.float32)
    total, doubled = pmap(lambda w, x: (lax.psum(w * x, "i"), x * 2.0), axis_name="i",
                          backend="mpi", in_axes=(None, 0), out_axes=(None, 0))(w, mine(d))
    assert np.array_equal(total, (w * d).sum(0)) and np.array_equal(doubled, mine(d) * 2)

    # send/recv by channel: point-to-point MPI messages between the ranks
    r = rng.integers(-9, 9, (n, 3)).astype(np.float32)
    for g, w in zip(pmap(_ring_program(n), backend="mpi", timeout=60)(mine(r)),
                    _ring_reference(r)):
        assert np.array_equal(g, mine(w)), (g, w)
    try:
        pmap(lambda a: lax.recv(lax.create_token(), "f32[3]", 3, source_target_pairs=[(0, 1)])[0],
             backend="mpi", timeout=30)(mine(r))
    except CollectiveError as error:
        # every rank names the recv that failed and why
        assert "recv on channel 3 (replica 1 from replica 0): replica 0 finished without " \
               "sending it" in str(error), error
    else:
        raise AssertionError("a recv with no send did not raise")

    # an unreceived message is an error on every rank, and does not reach a later run
    lonely = lambda a: lax.send(a * 0.0, lax.create_token(), 4,  # noqa: E731
                                source_target_pairs=[(0, 1)])
    try:
        pmap(lonely, backend="mpi", timeout=30)(mine(r))
    except CollectiveError as error:
        assert "messages never received" in str(error), error
    else:
        raise AssertionError("an unreceived message did not raise")

    def pair(a):
        token = lax.send(a, lax.create_token(), 4, source_target_pairs=[(0, 1)])
        return lax.recv(token, "f32[3]", 4, source_target_pairs=[(0, 1)])[0]

    received = pmap(pair, backend="mpi", timeout=30)(mine(r))
    assert rank != 1 or np.array_equal(received[0], r[0])

    def mismatched(a):
        twice = lax.eq(lax.replica_id(), np.uint32(0))
        return lax.cond(twice, lambda b: lax.psum(lax.psum(b, "i"), "i"),
                        lambda b: lax.psum(b, "i"), a)

    try:
        pmap(mismatched, axis_name="i", backend="mpi", timeout=30)(mine(v))
    except CollectiveError as error:
        assert "not every process reaches it" in str(error), error
    else:
        raise AssertionError("mismatched collective counts did not raise")

    from numxla.primitives import side_effects as se

    def boom(a):
        if rank == n - 1:
            raise ValueError("replica data rejected")
        return a

    se.register_custom_call_target("mpi_boom", boom)
    try:
        pmap(lambda a: lax.psum(lax.custom_call("mpi_boom", [a], result_shapes="f32[4]"), "i"),
             axis_name="i", backend="mpi", timeout=30)(mine(v))
    except (CollectiveError, ValueError) as error:
        assert "replica data rejected" in str(error), error
    else:
        raise AssertionError("a failing rank did not end the run")
    if n == 2:
        replicas_per_rank(rank)
    comm.Barrier()
    print(f"OK rank {rank}", flush=True)


def replicas_per_rank(rank: int) -> None:
    """2 replicas on each of 2 ranks (``NUMXLA_DEVICE_COUNT=2``): every
    collective, grouped every way, the same as 4 replicas on threads."""
    import numxla
    os.environ["NUMXLA_DEVICE_COUNT"] = "2"
    assert (numxla.local_device_count(), numxla.device_count()) == (2, 4)
    assert [d.id for d in numxla.local_devices()] == [2 * rank, 2 * rank + 1]

    def mine(a):
        return a[2 * rank:2 * rank + 2]

    rng = np.random.default_rng(9)   # the same global values on every rank
    for groups in _groups(4):        # all in one group, pairs within a rank, across ranks
        size = 4 if groups is None else len(groups[0])
        x = rng.integers(-20, 20, (4, 3, 2)).astype(np.float32)   # exact in any order
        y = rng.integers(-50, 50, (4, 2 * size, size)).astype(np.int32)
        fn = _program(4, groups)
        got = pmap(fn, backend="mpi", timeout=60)(mine(x), mine(y))
        on_threads = pmap(fn, timeout=60)(x, y)
        for g, w, t in zip(got, _reference(fn, [x, y]), on_threads):
            assert g.dtype == w.dtype and np.array_equal(g, mine(w)), (groups, g, w)
            assert np.array_equal(g, mine(t)), (groups, g, t)

    def spellings(a):
        return (lax.psum(a, "i"), lax.pmean(a, "i"), lax.pmax(a, "i"), lax.pmin(a, "i"),
                lax.ppermute(a, "i", [(0, 3), (3, 1), (1, 2), (2, 0)]), lax.axis_index("i"),
                lax.all_gather(a, "i"), lax.all_to_all(a, "i", 0, 0, tiled=True))
    v = rng.integers(-20, 20, (4, 4)).astype(np.float32)
    for g, t in zip(pmap(spellings, axis_name="i", backend="mpi")(mine(v)),
                    pmap(spellings, axis_name="i")(v)):
        assert np.array_equal(g, mine(t)), (g, t)
    # floats in any order: the replicas of both ranks hold the same bits
    f = rng.standard_normal((4, 1000)).astype(np.float32)
    mean = pmap(lambda a: lax.pmean(a, "i"), axis_name="i", backend="mpi")(mine(f))
    assert np.allclose(mean, f.mean(0), atol=1e-6) and np.array_equal(mean[0], mean[1])
    from mpi4py import MPI
    every = MPI.COMM_WORLD.allgather(mean[0])
    assert np.array_equal(every[0], every[1])

    r = rng.integers(-9, 9, (4, 3)).astype(np.float32)   # messages within and across ranks
    for g, w in zip(pmap(_ring_program(4), backend="mpi", timeout=60)(mine(r)),
                    _ring_reference(r)):
        assert np.array_equal(g, mine(w)), (g, w)
    p = rng.integers(-20, 20, (4, 3)).astype(np.float32)  # 2 replicas x 2 partitions
    got = pmap(_partition_program, backend="mpi", num_partitions=2, timeout=60)(mine(p))
    want = lax.run_replicated(_partition_program, list(p), num_replicas=2, num_partitions=2)
    for j, g in enumerate(got):
        assert np.array_equal(g, np.stack([np.asarray(w[j]) for w in mine(want)])), j
    s, idx = pmap(lambda a: (lax.psum(a, "i"), lax.axis_index("i")), axis_name="i",
                  backend="mpi", global_arguments=True)(v)
    assert np.array_equal(s, np.broadcast_to(v.sum(0), v.shape)) and np.array_equal(idx, range(4))

    from numxla.primitives import side_effects as se

    def boom(a):   # replica 3 only: rank 1's second thread
        if a[0] == 3:
            raise ValueError("replica 3 rejected its data")
        return a

    se.register_custom_call_target("mpi_boom_3", boom)
    try:
        pmap(lambda a: lax.psum(lax.custom_call("mpi_boom_3", [a], result_shapes="f32[4]"),
                                "i"), axis_name="i", backend="mpi", timeout=30)(
            mine(np.repeat(np.arange(4, dtype=np.float32)[:, None], 4, 1)))
    except (CollectiveError, ValueError) as error:
        assert "replica 3 rejected its data" in str(error), error
    else:
        raise AssertionError("a failing replica did not end the run")
    try:
        pmap(lambda a: a, backend="mpi")(v[:1])
    except ValueError as error:
        assert "size local_devices=2" in str(error), error
    else:
        raise AssertionError("one slice was taken for a rank of 2 replicas")
    del os.environ["NUMXLA_DEVICE_COUNT"]


if __name__ == "__main__":
    main()
