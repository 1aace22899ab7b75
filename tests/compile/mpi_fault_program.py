"""Run by tests/compile/test_pmap_mpi.py under ``mpiexec --with-ft ulfm -n 4``:
rank 2 dies in the middle of a step (``os._exit``, or ``kill``: SIGKILL,
between two collectives) and every other rank raises a ``CollectiveError``
naming it within the timeout, then exits.
Prints the error and ``OK rank <r>`` on each survivor."""
from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import numxla.primitives as lax  # noqa: E402
from numxla.compile import CollectiveError, pmap  # noqa: E402
from numxla.primitives import side_effects as se  # noqa: E402

TIMEOUT = 60.0
DEATHS = {"exit": lambda: os._exit(7), "kill": lambda: os.kill(os.getpid(), signal.SIGKILL)}


def main(how: str) -> None:
    import numxla
    rank = numxla.process_index()
    calls = []

    def maybe_die(a):
        calls.append(1)
        if rank == 2 and len(calls) == 2:   # the second step, after its first psum
            DEATHS[how]()
        return a

    se.register_custom_call_target("maybe_die", maybe_die)
    step = pmap(lambda a: lax.psum(lax.custom_call("maybe_die", [lax.psum(a, "i")],
                                                   result_shapes="f32[4]"), "i"),
                axis_name="i", backend="mpi", timeout=TIMEOUT)
    x = np.ones((1, 4), np.float32)
    assert np.array_equal(step(x), np.full((1, 4), 16.0))   # compiled, and a whole step
    start = time.monotonic()
    try:
        step(x)
    except CollectiveError as error:
        took = time.monotonic() - start
        print(f"rank {rank}: {error} ({took:.1f} s)", flush=True)
        assert "rank 2 (replica 2) died" in str(error) and took < TIMEOUT
        print(f"OK rank {rank}", flush=True)
    else:
        raise AssertionError("a dead rank went unnoticed")


if __name__ == "__main__":
    main(sys.argv[1])
