"""Issue 6's collective benchmark: AllReduce of 16 MB f32.

    python benchmarks/collectives.py                  # threads: 2 replicas in this process
    mpiexec -n 2 python benchmarks/collectives.py     # MPI: 2 ranks

Threads: the AllReduce inside ``pmap`` (rounds of ``psum`` in a loop, minus
the same loop without it) against one copy of the 16 MB buffer.  MPI: the same difference against a raw mpi4py
``Allreduce`` of the same buffer.  Medians after warm-up."""
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


def main() -> None:
    if "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        ours = allreduce_time("mpi", comm.size)
        buf = np.ones(N, np.float32)
        out = np.empty_like(buf)
        raw = median(lambda: comm.Allreduce(buf, out, op=MPI.SUM))
        if comm.rank == 0:
            print(f"MPI, {comm.size} ranks: pmap AllReduce {ours * 1e3:.2f} ms, raw mpi4py "
                  f"Allreduce {raw * 1e3:.2f} ms: bandwidth ratio {raw / ours:.2f}x (target ≥ 0.9)")
    else:
        ours = allreduce_time("threads", 2)
        src = np.ones(N, np.float32)
        dst = np.empty_like(src)
        copy = median(lambda: np.copyto(dst, src))
        print(f"threads, 2 replicas: pmap AllReduce {ours * 1e3:.2f} ms, one 16 MB copy "
              f"{copy * 1e3:.2f} ms: {ours / copy:.2f}x a copy (target ≤ 2)")


if __name__ == "__main__":
    main()
