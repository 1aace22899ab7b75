"""pmap's MPI backend: ``mpiexec -n N python script.py`` runs one replica per
rank (mpi4py, the optional ``mpi`` extra).

Rank ``r`` runs replica ``r``: it passes that replica's slice of the mapped
arguments and gets its results back (JAX's multi-process convention), or,
with ``global_arguments=True``, every rank passes the same global arguments,
takes slice ``r`` and gets every replica's stacked results.  Before each collective the ranks agree on it: a
non-blocking all-gather of a fixed-size record (collective number, what it
is, a hash of its parameters and operand types — or "finished" / "failed")
polled against the timeout, so mismatched collectives, a rank that finished
early or failed, and a rank that never arrives are errors, not hangs.  Then:

* an AllReduce of row-major buffers whose computation is one add/mul/max/min
  of numbers is an MPI ``Allreduce`` (SUM/PROD/MAX/MIN) on a communicator
  split by ``replica_groups``;
* every other collective gathers every rank's operands (``allgather``) and
  computes its own results with the reference semantics.

Send/recv with ``source_target_pairs`` are MPI messages tagged by the
channel, on a communicator of the run's own (duplicated for each run of a
program that has them, so a failed run's messages never reach a later one).
A rank that finishes says so to every other rank, so a recv its source will
never satisfy ends at once; the finish agreement carries a checksum of the
messages each rank sent and received, so unreceived ones are errors.
"""
from __future__ import annotations

import hashlib
import time
from typing import Any, Sequence

import numpy as np

from numxla.primitives import collectives as co

__all__ = ["MPIRendezvous", "mpi_world"]

_RECORD = 160  # bytes: k (8), kind (1), digest (32), messages sent, received (8 + 8), text
_COLLECTIVE, _FINISHED, _FAILED = 0, 1, 2


def _mpi() -> Any:
    """The ``mpi4py.MPI`` module (imported when the MPI backend is used)."""
    from mpi4py import MPI
    return MPI


def mpi_world():
    """``mpi4py.MPI.COMM_WORLD``, with a clear error when mpi4py is missing."""
    try:
        return _mpi().COMM_WORLD
    except ImportError as error:
        raise ImportError("pmap(backend='mpi') needs mpi4py and an MPI runtime: "
                          "pip install 'numxla[mpi]'") from error


def _record(k: int, kind: int, text: str, signature: Any,
            messages: tuple[int, int] = (0, 0)) -> np.ndarray:
    rec = np.zeros(_RECORD, np.uint8)
    rec[:8] = np.frombuffer(np.int64(k).tobytes(), np.uint8)
    rec[8] = kind
    rec[9:41] = np.frombuffer(hashlib.sha256(repr(signature).encode()).digest(), np.uint8)
    rec[41:57] = np.frombuffer(np.array(messages, np.uint64).tobytes(), np.uint8)
    data = text.encode()[:_RECORD - 57]
    rec[57:57 + len(data)] = np.frombuffer(data, np.uint8)
    return rec


def _decode(rec: np.ndarray) -> tuple[int, int, bytes, str, tuple[int, int]]:
    k = int(np.frombuffer(rec[:8].tobytes(), np.int64)[0])
    text = rec[57:].tobytes().rstrip(b"\0").decode(errors="replace")
    sent, received = (int(v) for v in np.frombuffer(rec[41:57].tobytes(), np.uint64))
    return k, int(rec[8]), rec[9:41].tobytes(), text, (sent, received)


def _message_sum(counts: dict[tuple[int, int, int], int]) -> int:
    """A checksum of message counts by (channel, source, target), mod 2**64:
    the ranks' sums of what they sent and of what they received are equal
    when every message was received (barring a 2**-64 accident)."""
    total = 0
    for key, n in counts.items():
        h = int.from_bytes(hashlib.sha256(repr(key).encode()).digest()[:8], "little")
        total = (total + h * n) % (1 << 64)
    return total


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
    """The rendezvous of ``compile.spmd.rendezvous`` over MPI ranks."""

    def __init__(self, comm: Any, grid: co.ProcessGrid, timeout: float, shared: dict,
                 messages: bool = False):
        self.comm = comm
        self.grid = grid
        self.timeout = timeout
        # kept between runs: result buffers (MPI is fastest on buffers it has
        # seen before) and each AllReduce's plan
        self.shared = shared
        # point-to-point messages (``messages``: the program has some): the
        # run's own communicator (Dup is collective: every rank runs the
        # same program), messages in flight, counts by (channel, source, target)
        self.p2p = comm.Dup() if messages else None
        self._sends: list = []
        self._sent: dict[tuple[int, int, int], int] = {}
        self._received: dict[tuple[int, int, int], int] = {}
        self._done: set[int] = set()  # ranks that said they finished this run
        self._done_tag = comm.Get_attr(_mpi().TAG_UB) if messages else None

    def _agree(self, k: int, kind: int, text: str, signature: Any,
               messages: tuple[int, int] = (0, 0)) -> list:
        """All ranks state what they do next; raise unless they all do the same.
        Returns every rank's record (``messages``: see ``finish``)."""
        from .rendezvous import CollectiveError
        send = _record(k, kind, text, signature, messages)
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
                return records
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
        from .rendezvous import _shared_results
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
            from .rendezvous import _ufunc_of
            MPI = _mpi()
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
    # channel on the run's communicator.  A rank that finishes tells every
    # other one (tag _done_tag), so a recv waiting for a message its source
    # will never send ends with an error at once.

    def send(self, index: int, channel_id: int, target: int, value: Any) -> None:
        """A message to rank ``target`` (non-blocking: delivered at the latest
        when this rank finishes)."""
        from .rendezvous import CollectiveError
        if channel_id >= self._done_tag:
            raise CollectiveError(f"send on channel {channel_id}: MPI tags go up to "
                                  f"{self._done_tag - 1}")
        self._sends.append((self.p2p.isend(value, dest=target, tag=channel_id),
                            channel_id, target))
        key = (channel_id, index, target)
        self._sent[key] = self._sent.get(key, 0) + 1

    def recv(self, index: int, channel_id: int, source: int) -> Any:
        """The next message rank ``source`` sent this rank on the channel,
        polled against the timeout and ``source`` finishing."""
        from .rendezvous import CollectiveError
        what = f"recv on channel {channel_id} (replica {index} from replica {source})"
        deadline = time.monotonic() + self.timeout
        while not self.p2p.iprobe(source=source, tag=channel_id):
            # (MPI orders messages of one tag only: look again once it said so)
            if self._finished(source) and not self.p2p.iprobe(source=source, tag=channel_id):
                raise CollectiveError(f"{what}: replica {source} finished without sending it")
            if time.monotonic() > deadline:
                raise CollectiveError(f"{what}: timed out after {self.timeout:g} s")
            time.sleep(1e-5)
        key = (channel_id, source, index)
        self._received[key] = self._received.get(key, 0) + 1
        return self.p2p.recv(source=source, tag=channel_id)

    def _finished(self, source: int) -> bool:
        """Whether rank ``source`` said it finished."""
        if source not in self._done and self.p2p.iprobe(source=source, tag=self._done_tag):
            self.p2p.recv(source=source, tag=self._done_tag)
            self._done.add(source)
        return source in self._done

    def finish(self, index: int, count: int) -> None:
        """This rank is done: it tells the others, the ranks agree (and check
        that every message sent was received), its messages are delivered,
        and last the others' word that they finished is taken."""
        from .rendezvous import CollectiveError
        if self.p2p is None:
            self._agree(count, _FINISHED, "finished", ("finished",))
            return
        done = [self.p2p.isend(None, dest=rank, tag=self._done_tag)
                for rank in range(self.comm.size) if rank != index]
        balance = (_message_sum(self._sent), _message_sum(self._received))
        records = self._agree(count, _FINISHED, "finished", ("finished",), balance)
        sent = sum(r[4][0] for r in records) % (1 << 64)
        if sent != sum(r[4][1] for r in records) % (1 << 64):
            sent = ", ".join(f"{n} on channel {c} to replica {t}"
                             for (c, _, t), n in sorted(self._sent.items())) or "nothing"
            got = ", ".join(f"{n} on channel {c} from replica {s}"
                            for (c, s, _), n in sorted(self._received.items())) or "nothing"
            error = CollectiveError(f"send: messages never received (replica {index} sent "
                                    f"{sent}; received {got})")
            error.ranks_know = True
            raise error
        deadline = time.monotonic() + self.timeout
        for request in [r for r, _, _ in self._sends] + done:
            while not request.Test():
                if time.monotonic() > deadline:
                    raise CollectiveError(f"finished: replica {index}'s messages were not "
                                          f"delivered within {self.timeout:g} s")
                time.sleep(1e-5)
        for rank in range(self.comm.size):
            while rank != index and not self._finished(rank):  # sent before the agreement
                if time.monotonic() > deadline:
                    raise CollectiveError(f"finished: replica {rank} agreed but its word "
                                          f"never came within {self.timeout:g} s")
                time.sleep(1e-5)
        self.p2p.Free()

    def abort(self, error: BaseException) -> None:
        """This rank failed: tell the others (they are waiting to agree)."""
        from .rendezvous import CollectiveError
        if getattr(error, "ranks_know", False):
            return
        try:
            self._agree(-1, _FAILED, f"{type(error).__name__}: {error}", ("failed",))
        except CollectiveError:
            pass
