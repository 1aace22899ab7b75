"""Issue 6's collective benchmark: AllReduce of 16 MB f32.

    python benchmarks/collectives.py                  # threads: 2 replicas in this process
    mpiexec -n 2 python benchmarks/collectives.py     # MPI: 2 ranks

The AllReduce is timed inside ``pmap``, in a loop of ``rounds`` in one call,
two ways, each against the reference operation (threads: one copy of the
buffer, ``np.copyto``; MPI: a raw mpi4py ``Allreduce``) timed the same way:

* alone: ``c = psum(c)`` per round (minus a call without the loop), against
  a NumPy loop of the reference alone;
* with a pass over the data, as programs use it: ``c = psum(c) * 0.5`` minus
  ``c = c * 0.5``, against a NumPy loop with the reference in place of the
  AllReduce (both differences carry the same cache effects: 16 MB moved
  in between evicts what the pass would have found in cache).

Medians after warm-up.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numxla.primitives as lax  # noqa: E402
import numxla.primitives.numpy as xnp  # noqa: E402
from numxla.compile import pmap  # noqa: E402

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


def allreduce_time(backend: str, replicas: int, rounds: int = 20) -> tuple[float, float]:
    """Seconds per AllReduce in a pmap call: alone (``rounds`` of
    ``c = psum(c)``, minus a call without them) and with a pass over the data
    (``rounds`` of ``c = psum(c) * 0.5`` minus ``rounds`` of ``c = c * 0.5``)."""
    x = np.random.default_rng(0).standard_normal((replicas, N)).astype(np.float32) * 1e-3
    if backend == "mpi":   # each rank passes its own replica's slice
        x = x[:1]

    def looped(body):
        return pmap(lambda v: lax.fori_loop(0, rounds, lambda i, c: body(c), v)[:1],
                    axis_name="i", backend=backend)

    def per_round(with_body, without_body):
        return (median(lambda: with_body(x), 7) - median(lambda: without_body(x), 7)) / rounds

    nothing = pmap(lambda v: v[:1], axis_name="i", backend=backend)
    alone = per_round(looped(lambda c: lax.psum(c, "i")), nothing)
    with_pass = per_round(looped(lambda c: lax.psum(c, "i") * 0.5), looped(lambda c: c * 0.5))
    return alone, with_pass


def reference_time(step, rounds: int = 20) -> tuple[float, float]:
    """Seconds per ``step(c, r)`` (writing ``r`` from ``c``) in NumPy loops
    of the same structure: alone, and with a pass ``c = r * 0.5`` (minus the
    loop of passes alone)."""
    a = np.ones(N, np.float32) * 1e-3
    r, d = np.empty_like(a), np.empty_like(a)

    def alone() -> None:
        c, e = a.copy(), r
        for _ in range(rounds):
            step(c, e)
            c, e = e, c

    def loop(with_step: bool) -> None:
        c, e = a.copy(), d
        for _ in range(rounds):
            if with_step:
                step(c, r)
                np.multiply(r, 0.5, out=e)
            else:
                np.multiply(c, 0.5, out=e)
            c, e = e, c

    copy_of_a = median(lambda: a.copy(), 7)
    return ((median(alone, 7) - copy_of_a) / rounds,
            (median(lambda: loop(True), 7) - median(lambda: loop(False), 7)) / rounds)


def report(what: str, ours: tuple[float, float], reference: tuple[float, float], name: str,
           bandwidth: bool) -> None:
    """One line per way of timing: pmap's time, the reference's and their ratio
    (MPI: bandwidth, reference time over ours; threads: our time over a copy's)."""
    measure, target = ("the bandwidth of ", "≥ 0.9") if bandwidth else ("", "≤ 2")
    for how, a, b in zip(("alone in a loop", "with a pass over the data"), ours, reference):
        ratio = b / a if bandwidth else a / b
        print(f"{what}, {how}: pmap AllReduce {a * 1e3:.2f} ms, {name} {b * 1e3:.2f} ms: "
              f"{ratio:.2f}x {measure}{name} (target {target})")


def main() -> None:
    if "OMPI_COMM_WORLD_SIZE" in os.environ or "PMI_SIZE" in os.environ:
        from mpi4py import MPI
        comm = MPI.COMM_WORLD
        ours = allreduce_time("mpi", comm.size)
        raw = reference_time(lambda c, r: comm.Allreduce(c, r, op=MPI.SUM))
        if comm.rank == 0:
            report(f"MPI, {comm.size} ranks", ours, raw, "raw mpi4py Allreduce", True)
    else:
        report("threads, 2 replicas", allreduce_time("threads", 2), reference_time(np.copyto),
               "one 16 MB copy", False)


if __name__ == "__main__":
    main()
