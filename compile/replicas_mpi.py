"""pmap's MPI backend: ``mpiexec -n N python script.py`` runs one replica per
rank (mpi4py, the optional ``mpi`` extra).

Every rank calls the same ``pmap``-ed function with the same global
arguments; rank ``r`` runs replica ``r`` on slice ``r`` and every rank gets
the stacked results.  Before each collective the ranks agree on it: a
non-blocking all-gather of a fixed-size record (collective number, what it
is, a hash of its parameters and operand types — or "finished" / "failed")
polled against the timeout, so mismatched collectives, a rank that finished
early or failed, and a rank that never arrives are errors, not hangs.  Then:

* an AllReduce of row-major buffers whose computation is one add/mul/max/min
  of numbers is an MPI ``Allreduce`` (SUM/PROD/MAX/MIN) on a communicator
  split by ``replica_groups``;
* every other collective gathers every rank's operands (``allgather``) and
  computes its own results with the reference semantics.
"""
from __future__ import annotations

import hashlib
import itertools
import time
from typing import Any, Sequence

import numpy as np

from primitives import collectives as co

__all__ = ["MPIRendezvous", "mpi_world"]

_RECORD = 160  # bytes: k (8), kind (1), digest (32), text (the rest)
_COLLECTIVE, _FINISHED, _FAILED = 0, 1, 2


def mpi_world():
    """``mpi4py.MPI.COMM_WORLD``, with a clear error when mpi4py is missing."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError("pmap(backend='mpi') needs mpi4py and an MPI runtime: "
                          "pip install 'numxla[mpi]'") from error
    return MPI.COMM_WORLD


def _record(k: int, kind: int, text: str, signature: Any) -> np.ndarray:
    rec = np.zeros(_RECORD, np.uint8)
    rec[:8] = np.frombuffer(np.int64(k).tobytes(), np.uint8)
    rec[8] = kind
    rec[9:41] = np.frombuffer(hashlib.sha256(repr(signature).encode()).digest(), np.uint8)
    data = text.encode()[:_RECORD - 41]
    rec[41:41 + len(data)] = np.frombuffer(data, np.uint8)
    return rec


def _decode(rec: np.ndarray) -> tuple[int, int, bytes, str]:
    k = int(np.frombuffer(rec[:8].tobytes(), np.int64)[0])
    text = rec[41:].tobytes().rstrip(b"\0").decode(errors="replace")
    return k, int(rec[8]), rec[9:41].tobytes(), text


_RUNS = itertools.count()


def _mpi() -> Any:
    from mpi4py import MPI
    return MPI


def _disagreement(records: list, k: int, text: str, rank: int) -> str:
    """What the ranks' records of collective number ``k`` say went wrong."""
    failed = [(i, r[3]) for i, r in enumerate(records) if r[1] == _FAILED]
    if failed:
        return f"{text} on rank {rank}: the run failed: rank {failed[0][0]}: {failed[0][1]}"
    states = "; ".join(f"replica {i} " + (f"finished after {r[0]} collective(s)"
                                           if r[1] == _FINISHED else f"at {r[3]}")
                       for i, r in enumerate(records))
    if any(r[1] == _FINISHED for r in records):
        return f"{text} (collective #{k + 1}): not every process reaches it ({states})"
    return (f"collective #{k + 1}: the processes reached different collectives or parameters "
            f"({states})")


class MPIRendezvous:
    """The rendezvous of ``compile.replicas`` over MPI ranks."""

    def __init__(self, comm: Any, grid: co.ProcessGrid, timeout: float, shared: dict):
        self.comm = comm
        self.grid = grid
        self.timeout = timeout
        # kept between runs: result buffers (MPI is fastest on buffers it has
        # seen before) and each AllReduce's plan
        self.shared = shared
        self._sends: list = []  # point-to-point messages in flight
        self.run = next(_RUNS)  # the same on every rank: every rank runs the same calls
        self._done: set[int] = set()  # ranks that said they finished this run
        self._done_tag = comm.Get_attr(_mpi().TAG_UB)

    def _agree(self, k: int, kind: int, text: str, signature: Any) -> None:
        """All ranks state what they do next; raise unless they all do the same."""
        from .replicas import CollectiveError
        send = _record(k, kind, text, signature)
        got = np.empty((self.comm.size, _RECORD), np.uint8)
        request = self.comm.Iallgather(send, got)
        deadline = time.monotonic() + self.timeout
        while not request.Test():
            if time.monotonic() > deadline:
                raise CollectiveError(f"{text} (collective #{k + 1}) on rank {self.comm.rank}: "
                                      f"timed out after {self.timeout:g} s waiting for the "
                                      f"other ranks")
            time.sleep(1e-5)
        records = [_decode(r) for r in got]
        if all(r[1:3] == records[0][1:3] and r[0] == records[0][0] for r in records):
            if kind != _FAILED:
                return
            problem = f"every rank failed: {text}"
        else:
            problem = _disagreement(records, k, text, self.comm.rank)
        error = CollectiveError(problem)
        error.ranks_know = True  # every rank read the same records: abort need not tell
        raise error

    def exchange(self, index: int, k: int, prim: Any, params: dict, operands: list,
                 signature: Any) -> list:
        self._agree(k, _COLLECTIVE, prim.name, (prim.name, signature))
        everyone = self.comm.allgather(operands)
        return co.COLLECTIVE_SEMANTICS[prim](self.grid, everyone, **params)[index]

    def all_reduce_buffers(self, index: int, k: int, params: dict, buffers: Sequence[np.ndarray],
                           outs: Sequence[np.ndarray] | None, signature: Any,
                           slot: str = "") -> Sequence[np.ndarray]:
        """The AllReduce into ``outs`` (None: into the result buffers of
        equation ``slot`` kept between runs, see
        ``Rendezvous.all_reduce_buffers``); returns them."""
        from .replicas import _shared_results
        self._agree(k, _COLLECTIVE, "all_reduce", ("all_reduce", signature))
        comm, ops = self._plan(index, params, buffers, signature)
        if outs is None:
            outs = _shared_results(self.shared, ("results", signature, slot), buffers)
        for graph, op, buf, out in zip(params["computation"], ops, buffers, outs):
            if op is not None:
                comm.Allreduce(buf, out, op=op)
            else:
                members = comm.allgather(np.asarray(buf))
                acc = members[0]
                for m in members[1:]:
                    acc = co._combine(graph, acc, m)
                out[...] = acc
        return outs

    def _plan(self, index: int, params: dict, buffers: Sequence[np.ndarray], signature: Any
              ) -> tuple[Any, list]:
        """The group's communicator and the MPI op of each operand (None: the
        general path), made once per AllReduce: a computation that is one
        add/mul of numbers, or max/min of integers, is an MPI op (MPI's MAX and
        MIN do not propagate NaN as XLA does: floats take the general path)."""
        plan = self.shared.get(("plan", signature))
        if plan is None:
            from mpi4py import MPI

            from .replicas import _ufunc_of
            groups = co._groups_for("all_reduce", self.grid, params["replica_groups"],
                                    params["channel_id"], params["use_global_device_ids"])
            mpi_ops = {np.add: MPI.SUM, np.multiply: MPI.PROD, np.maximum: MPI.MAX,
                       np.minimum: MPI.MIN}
            ops = []
            for graph, buf in zip(params["computation"], buffers):
                ufunc = _ufunc_of(graph, buf.dtype)
                nan_rule = buf.dtype.kind == "f" and ufunc in (np.maximum, np.minimum)
                ops.append(mpi_ops[ufunc] if ufunc is not None and not nan_rule else None)
            plan = self.shared[("plan", signature)] = (self._group_comm(groups, index), ops)
        return plan

    def _group_comm(self, groups: list[list[int]], index: int) -> Any:
        """The communicator of ``index``'s group (``Split`` is collective: every
        rank makes it at the same AllReduce)."""
        key = ("comm", tuple(map(tuple, groups)))
        comm = self.shared.get(key)
        if comm is None:
            color = next(i for i, g in enumerate(groups) if index in g)
            comm = self.shared[key] = self.comm.Split(color, groups[color].index(index))
        return comm

    # Point-to-point messages: send/recv with source_target_pairs, tagged by
    # channel.  A rank that finishes tells every other one (tag _done_tag,
    # the run's number as payload), so a recv waiting for a message its
    # source will never send ends with an error at once.

    def send(self, index: int, channel_id: int, target: int, value: Any) -> None:
        """A message to rank ``target`` (non-blocking: delivered at the latest
        when this rank finishes)."""
        from .replicas import CollectiveError
        if channel_id >= self._done_tag:
            raise CollectiveError(f"send on channel {channel_id}: MPI tags go up to "
                                  f"{self._done_tag - 1}")
        self._sends.append((self.comm.isend(value, dest=target, tag=channel_id),
                            channel_id, target))

    def recv(self, index: int, channel_id: int, source: int) -> Any:
        """The next message rank ``source`` sent this rank on the channel,
        polled against the timeout and ``source`` finishing."""
        from .replicas import CollectiveError
        what = f"recv on channel {channel_id} (replica {index} from replica {source})"
        deadline = time.monotonic() + self.timeout
        while not self.comm.iprobe(source=source, tag=channel_id):
            if self._finished(source) and not self.comm.iprobe(source=source, tag=channel_id):
                raise CollectiveError(f"{what}: replica {source} finished without sending it")
            if time.monotonic() > deadline:
                raise CollectiveError(f"{what}: timed out after {self.timeout:g} s")
            time.sleep(1e-5)
        return self.comm.recv(source=source, tag=channel_id)

    def _finished(self, source: int) -> bool:
        """Whether rank ``source`` said it finished this run (earlier runs' word discarded)."""
        while source not in self._done and self.comm.iprobe(source=source, tag=self._done_tag):
            if self.comm.recv(source=source, tag=self._done_tag) == self.run:
                self._done.add(source)
        return source in self._done

    def finish(self, index: int, count: int) -> None:
        """This rank is done: it tells the others, its messages are delivered,
        then the ranks agree; last, the others' word that they finished is taken."""
        from .replicas import CollectiveError
        for rank in range(self.comm.size):
            if rank != index:
                self._sends.append((self.comm.isend(self.run, dest=rank, tag=self._done_tag),
                                    "(finished)", rank))
        deadline = time.monotonic() + self.timeout
        for request, channel_id, target in self._sends:
            while not request.Test():
                if time.monotonic() > deadline:
                    raise CollectiveError(f"send on channel {channel_id} (replica {index} to "
                                          f"replica {target}): never received within "
                                          f"{self.timeout:g} s")
                time.sleep(1e-5)
        self._sends.clear()
        self._agree(count, _FINISHED, "finished", ("finished",))
        for rank in range(self.comm.size):
            while rank != index and not self._finished(rank):  # sent before the agreement
                if time.monotonic() > deadline:
                    raise CollectiveError(f"finished: replica {rank} agreed but its word "
                                          f"never came within {self.timeout:g} s")
                time.sleep(1e-5)

    def abort(self, error: BaseException) -> None:
        """This rank failed: tell the others (they are waiting to agree)."""
        from .replicas import CollectiveError
        if getattr(error, "ranks_know", False):
            return
        try:
            self._agree(-1, _FAILED, f"{type(error).__name__}: {error}", ("failed",))
        except CollectiveError:
            pass
