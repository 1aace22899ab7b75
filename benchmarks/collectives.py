"""Issue 6's collective benchmark: AllReduce of 16 MB f32.

    python benchmarks/collectives.py                  # threads: 2 replicas in this process
    mpiexec -n 2 python benchmarks/collectives.py     # MPI: 2 ranks

The AllReduce is timed where programs use it, inside a loop: ``rounds`` of
``c = psum(c) * 0.5`` in one ``pmap`` call, minus ``rounds`` of
``c = c * 0.5``, per round.  The reference is timed the same way, as a
NumPy loop with the reference operation in place of the AllReduce (threads:
one copy of the buffer, ``np.copyto``; MPI: a raw mpi4py ``Allreduce``), so
both differences carry the same cache effects (data the loop pass would
have found in cache is evicted by 16 MB moved in between).  The bare
reference (alone in a loop of its own) is printed too.  Medians after warm-up.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import primitives as lax  # noqa: E402
import primitives.numpy as xnp  # noqa: E402
from compile import pmap  # noqa: E402

N = 4 * 1024 * 1024       # 16 MB of f32


def median(fn, repeats=15):
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def allreduce_time(backend: str, replicas: int, rounds: int = 20) -> float:
    """Seconds per AllReduce: ``rounds`` of ``c = psum(c) * 0.5`` in one pmap
    call, minus ``rounds`` of ``c = c * 0.5``, divided by ``rounds``."""
    x = np.random.default_rng(0).standard_normal((replicas, N)).astype(np.float32)

    def looped(body):
        return pmap(lambda v: xnp.sum(lax.fori_loop(0, rounds, lambda i, c: body(c), v)),
                    axis_name="i", backend=backend)

    with_psum = looped(lambda c: lax.psum(c, "i") * 0.5)
    without = looped(lambda c: c * 0.5)
    return (median(lambda: with_psum(x), 7) - median(lambda: without(x), 7)) / rounds


def reference_time(step, rounds: int = 20) -> float:
    """Seconds per ``step(c, r)`` in a NumPy loop of ``r = step(c); c = r * 0.5``,
    minus the same loop without ``step``: the pmap loop's structure."""
    a = np.ones(N, np.float32)
    r, d = np.empty_like(a), np.empty_like(a)

    def loop(with_step: bool) -> None:
        c, e = a.copy(), d
        for _ in range(rounds):
            if with_step:
                step(c, r)
                np.multiply(r, 0.5, out=e)
            else:
                np.multiply(c, 0.5, out=e)
            c, e = e, c

    return (median(lambda: loop(True), 7) - median(lambda: loop(False), 7)) / rounds


def main() -> None:
    if "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        ours = allreduce_time("mpi", comm.size)
        raw = reference_time(lambda c, r: comm.Allreduce(c, r, op=MPI.SUM))
        buf, out = np.ones(N, np.float32), np.empty(N, np.float32)
        bare = median(lambda: comm.Allreduce(buf, out, op=MPI.SUM))
        if comm.rank == 0:
            print(f"MPI, {comm.size} ranks: pmap AllReduce {ours * 1e3:.2f} ms, raw mpi4py "
                  f"Allreduce in the same loop {raw * 1e3:.2f} ms (bare {bare * 1e3:.2f} ms): "
                  f"bandwidth ratio {raw / ours:.2f}x (target ≥ 0.9)")
    else:
        ours = allreduce_time("threads", 2)
        copy = reference_time(np.copyto)
        src, dst = np.ones(N, np.float32), np.empty(N, np.float32)
        bare = median(lambda: np.copyto(dst, src))
        print(f"threads, 2 replicas: pmap AllReduce {ours * 1e3:.2f} ms, one 16 MB copy in the "
              f"same loop {copy * 1e3:.2f} ms (bare {bare * 1e3:.2f} ms): {ours / copy:.2f}x a "
              f"copy (target ≤ 2)")


if __name__ == "__main__":
    main()
