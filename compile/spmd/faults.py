"""MPI ranks that die: ``mpiexec --with-ft ulfm`` (Open MPI's User-Level
Failure Mitigation) lets the survivors of a dead rank go on; without it Open
MPI ends the whole job at once (nothing hangs, but nobody raises).

Under ULFM a rank learns of a dead peer from the heartbeat failure detector,
which this module turns on before MPI starts (``OMPI_MCA_mpi_ft_detector``,
unless the environment says otherwise).  The detector beats only while MPI
makes progress, so a rank busy computing would be taken for dead: a daemon
thread (the *pulse*) makes progress twice a second (twice per heartbeat
period, ``OMPI_MCA_mpi_ft_detector_period``, when that is under a second).
Open MPI's own detector thread would do the same, but then ``MPI_Finalize``
hangs after a failure.  How soon a dead rank is noticed is the detector's
timeout (``OMPI_MCA_mpi_ft_detector_timeout``; Open MPI's default is 10 s).

An MPI error that says a process failed becomes a ``CollectiveError``
naming the dead ranks (:func:`peer_faults`); at exit such a process gives
``MPI_Finalize`` (which may wait for the dead forever) 10 s before an alarm
ends it.
"""
from __future__ import annotations

import atexit
import functools
import os
import sys
import threading
import time
from typing import Any, Callable

__all__ = ["mpi_world", "mpi", "peer_faults", "fault_tolerant"]

# set before MPI starts, when mpiexec runs the job with --with-ft ulfm
_ULFM_DEFAULTS = {"OMPI_MCA_mpi_ft_detector": "true",
                  "OMPI_MCA_mpi_ft_detector_thread": "false"}
_PULSE_SECONDS = 0.5  # at most; see _pulse_seconds


def fault_tolerant() -> bool:
    """Whether mpiexec runs this job with ``--with-ft ulfm``."""
    return os.environ.get("OMPI_MCA_mpi_ft_enable", "").lower() in ("1", "true")


def mpi() -> Any:
    """The ``mpi4py.MPI`` module, started with the failure detector on under ULFM."""
    if "mpi4py.MPI" not in sys.modules and fault_tolerant():
        for key, value in _ULFM_DEFAULTS.items():
            os.environ.setdefault(key, value)
    from mpi4py import MPI
    if fault_tolerant() and not _pulse:
        atexit.register(_bound_finalize)   # runs after the pulse stopped
        _start_pulse(MPI)
    return MPI


def mpi_world() -> Any:
    """``mpi4py.MPI.COMM_WORLD``, with a clear error when mpi4py is missing."""
    try:
        return mpi().COMM_WORLD
    except ImportError as error:
        raise ImportError("pmap(backend='mpi') needs mpi4py and an MPI runtime: "
                          "pip install 'numxla[mpi]'") from error


_pulse: list = []


def _pulse_seconds() -> float:
    """The pulse's period: ``_PULSE_SECONDS``, or half the detector's
    heartbeat period (``OMPI_MCA_mpi_ft_detector_period``) when shorter."""
    try:
        period = float(os.environ.get("OMPI_MCA_mpi_ft_detector_period", "inf"))
    except ValueError:
        period = float("inf")
    return min(_PULSE_SECONDS, period / 2) if period > 0 else _PULSE_SECONDS


def _start_pulse(MPI: Any) -> None:
    """MPI progress every ``_pulse_seconds()`` while this process lives (the
    detector's heartbeats), stopped before MPI finalizes."""
    if os.environ.get("OMPI_MCA_mpi_ft_detector", "").lower() not in ("1", "true"):
        _pulse.append(None)
        return
    stop, seconds = threading.Event(), _pulse_seconds()

    def beat() -> None:
        while not stop.wait(seconds):
            try:
                MPI.COMM_SELF.Iprobe()   # progress, on a communicator no one else uses
            except MPI.Exception:
                pass
    thread = threading.Thread(target=beat, name="mpi-pulse", daemon=True)
    thread.start()
    _pulse.append(thread)
    atexit.register(lambda: (stop.set(), thread.join()))


def dead_ranks(comm: Any, wait: float = 2.0) -> list[int]:
    """The ranks of ``comm`` this process knows have failed (ULFM), waiting
    up to ``wait`` seconds for the news after an error said so."""
    MPI = mpi()
    deadline = time.monotonic() + wait
    while True:
        try:
            failed = comm.Get_failed()
            dead = [r for r in MPI.Group.Translate_ranks(
                failed, list(range(failed.Get_size())), comm.Get_group()) if r != MPI.UNDEFINED]
        except (MPI.Exception, NotImplementedError, AttributeError):
            return []
        if dead or time.monotonic() > deadline:
            return dead
        time.sleep(0.05)


def peer_faults(method: Callable) -> Callable:
    """A method of ``MPIRendezvous`` whose MPI errors (a dead peer) raise a
    ``CollectiveError`` naming the dead ranks and their replicas."""
    @functools.wraps(method)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except mpi().Exception as error:
            if error.Get_error_class() not in _failure_classes():
                raise
            from .rendezvous import CollectiveError
            dead = dead_ranks(self.comm)
            who = ("; ".join(f"rank {r} (replica{'s' * (self.local > 1)} "
                             f"{', '.join(map(str, self.replicas_of(r)))}) died" for r in dead)
                   or "an MPI peer failed")
            raised = CollectiveError(f"{self.doing} on rank {self.comm.rank}: {who} "
                                     f"({error.Get_error_string()})")
            raised.ranks_know = True  # nothing more can be said to the dead
            _peer_died.append(dead)
            raise raised from None
    return wrapped


def _failure_classes() -> set:
    """The MPI error classes that mean a process failed (ULFM's)."""
    MPI = mpi()
    return {getattr(MPI, name) for name in ("ERR_PROC_FAILED", "ERR_PROC_FAILED_PENDING",
                                            "ERR_REVOKED") if hasattr(MPI, name)}


_FINALIZE_SECONDS = 10


def _bound_finalize() -> None:
    """At exit, before mpi4py's ``MPI_Finalize``: once a peer died, that
    may wait for it forever (Open MPI's sometimes does), so an alarm ends
    the process, its output flushed, should finalizing take more than
    ``_FINALIZE_SECONDS``."""
    if _peer_died:
        import signal
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(_FINALIZE_SECONDS)


_peer_died: list = []
