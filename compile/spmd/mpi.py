"""pmap's MPI backend: ``mpiexec -n N python script.py`` runs the replicas
on N ranks (mpi4py, the optional ``mpi`` extra), ``L`` replicas per rank
(threads: ``spmd/hybrid.py``), rank ``r`` running replicas ``r*L .. r*L+L-1``.

Each rank passes its replicas' slices of the mapped arguments and gets
their results back (JAX's multi-process convention), or, with
``global_arguments=True``, every rank passes the same global arguments and
gets every replica's stacked results.  Before each collective the ranks agree on it: a
non-blocking all-gather of a fixed-size record (collective number, what it
is, a hash of its parameters and operand types — or "finished" / "failed")
polled against the timeout, so mismatched collectives, a rank that finished
early or failed, and a rank that never arrives are errors, not hangs (a rank
that dies: ``spmd/faults.py``).  Then:

* an AllReduce of row-major buffers whose computation is one add/mul/max/min
  of numbers, where each rank's replicas are in one replica group, is the
  rank's replicas reduced in place and an MPI ``Allreduce`` (SUM/PROD/MAX/MIN)
  between the ranks, on a communicator split by ``replica_groups``; groups
  each within one rank need no MPI; any other grouping or computation
  gathers every member's buffers and reduces them in group order;
* every other collective gathers every rank's operands (``allgather``) and
  computes its own results with the reference semantics.

Send/recv with ``source_target_pairs`` are MPI messages tagged by the
channel and the replicas' places on their ranks, on a communicator of the
run's own (duplicated for each run of a program that has them, so a failed
run's messages never reach a later one).  A rank that finishes says so to
every other rank, so a recv its source will never satisfy ends at once; the
finish agreement carries a checksum of the messages each rank sent and
received, so unreceived ones are errors.
"""
from __future__ import annotations

import hashlib
import os
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np

from numxla.primitives import collectives as co

from .faults import mpi as _mpi, mpi_world, peer_faults

__all__ = ["MPIRendezvous", "mpi_world"]

_RECORD = 160  # bytes: k (8), kind (1), digest (32), messages sent, received (8 + 8), text
_COLLECTIVE, _FINISHED, _FAILED = 0, 1, 2


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


def _disagreement(records: list, k: int, text: str, rank: int, who: Callable) -> str:
    """What the ranks' records of collective number ``k`` say went wrong
    (``who(r)`` names rank ``r``)."""
    failed = [(i, r[3]) for i, r in enumerate(records) if r[1] == _FAILED]
    if failed:
        return f"{text} on rank {rank}: the run failed: rank {failed[0][0]}: {failed[0][1]}"
    states = "; ".join(f"{who(i)} " + (f"finished after {r[0]} collective(s)"
                                        if r[1] == _FINISHED else f"at {r[3]}")
                       for i, r in enumerate(records))
    if any(r[1] == _FINISHED for r in records):
        return f"{text} (collective #{k + 1}): not every process reaches it ({states})"
    return (f"collective #{k + 1}: the processes reached different collectives or parameters "
            f"({states})")


_MPI_OPS = {np.add: "SUM", np.multiply: "PROD", np.maximum: "MAX", np.minimum: "MIN"}


class _Backoff:
    """The pause between two polls: for the first 50 us a yield of the core
    (the others are usually microseconds away, and the shortest sleep is
    ~55 us), then sleeps of 10 us doubling up to 0.2 ms, so that a rank
    waiting long for a slower one leaves the core to it."""

    def __init__(self):
        self.spin_until = time.perf_counter() + 5e-5
        self.pause = 1e-5

    def __call__(self) -> None:
        if time.perf_counter() < self.spin_until:
            os.sched_yield()
            return
        time.sleep(self.pause)
        self.pause = min(2 * self.pause, 2e-4)


class MPIRendezvous:
    """The rendezvous of ``compile.spmd.rendezvous`` between MPI ranks, each
    running ``local`` replicas (``spmd/hybrid.py`` gathers them when more
    than one; the ``*_local`` methods take and give one entry per replica)."""

    def __init__(self, comm: Any, grid: co.ProcessGrid, timeout: float, shared: dict,
                 messages: bool = False, local: int = 1):
        self.comm = comm
        self.grid = grid
        self.timeout = timeout
        self.local = local
        self.base = comm.rank * local          # this rank's first replica
        self.doing = "pmap"                    # what errors of a dead peer name
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
        self._done_lock = threading.Lock()
        self._done_tag = comm.Get_attr(_mpi().TAG_UB) if messages else None

    def replicas_of(self, rank: int) -> range:
        return range(rank * self.local, (rank + 1) * self.local)

    def _who(self, rank: int) -> str:
        return f"replica {rank}" if self.local == 1 else f"rank {rank}"

    @peer_faults
    def _agree(self, k: int, kind: int, text: str, signature: Any,
               messages: tuple[int, int] = (0, 0)) -> list:
        """All ranks state what they do next; raise unless they all do the same.
        Returns every rank's record (``messages``: see ``finish``)."""
        from .rendezvous import CollectiveError
        self.doing = text if kind != _COLLECTIVE else f"{text} (collective #{k + 1})"
        send = _record(k, kind, text, signature, messages)
        got = np.empty((self.comm.size, _RECORD), np.uint8)
        request = self.comm.Iallgather(send, got)
        deadline, pause = time.monotonic() + self.timeout, _Backoff()
        while not request.Test():
            if time.monotonic() > deadline:
                raise CollectiveError(f"{self.doing} on rank {self.comm.rank}: timed out after "
                                      f"{self.timeout:g} s waiting for the other ranks")
            pause()
        records = [_decode(r) for r in got]
        if all(r[1:3] == records[0][1:3] and r[0] == records[0][0] for r in records):
            if kind != _FAILED:
                return records
            problem = f"every rank failed: {text}"
        else:
            problem = _disagreement(records, k, text, self.comm.rank, self._who)
        error = CollectiveError(problem)
        error.ranks_know = True  # every rank read the same records: abort need not tell
        raise error

    def exchange(self, index: int, k: int, prim: Any, params: dict, operands: list,
                 signature: Any) -> list:
        return self.exchange_local(k, prim, params, [operands], signature)[0]

    @peer_faults
    def exchange_local(self, k: int, prim: Any, params: dict, operands: list,
                       signature: Any) -> list:
        """The results of this rank's replicas (``operands``: each one's):
        the reference semantics over every replica's operands."""
        self._agree(k, _COLLECTIVE, prim.name, (prim.name, signature))
        everyone = [ops for part in self.comm.allgather(operands) for ops in part]
        results = co.COLLECTIVE_SEMANTICS[prim](self.grid, everyone, **params)
        return results[self.base:self.base + self.local]

    def all_reduce_buffers(self, index: int, k: int, params: dict, buffers: Sequence[np.ndarray],
                           outs: Sequence[np.ndarray] | None, signature: Any,
                           slot: str = "") -> Sequence[np.ndarray]:
        """The AllReduce into ``outs`` (None: into the result buffers of
        equation ``slot`` kept between runs, see
        ``Rendezvous.all_reduce_buffers``); returns them."""
        return self.all_reduce_local(k, params, [buffers], [outs], signature, [slot])[0]

    @peer_faults
    def all_reduce_local(self, k: int, params: dict, buffers: list, outs: list,
                         signature: Any, slots: list) -> list:
        """``all_reduce_buffers`` for this rank's replicas, one entry each."""
        from .rendezvous import _shared_results
        self._agree(k, _COLLECTIVE, "all_reduce", ("all_reduce", signature))
        mode, comm, ops, groups = self._plan(params, buffers[0], signature)
        targets = [o if o is not None else
                   _shared_results(self.shared, ("results", signature, s, j), b)
                   for j, (b, o, s) in enumerate(zip(buffers, outs, slots))]
        if mode == "ranks" and None not in ops:
            self._reduce_by_mpi(comm, ops, buffers, targets)
        else:
            members = dict(zip(self.replicas_of(self.comm.rank), buffers))
            if mode != "local":   # every member's buffers, for the group-order fold
                members = {m: b for part in comm.allgather(members) for m, b in part.items()}
            self._fold(params, groups, members, targets)
        return targets

    def _reduce_by_mpi(self, comm: Any, ops: list, buffers: list, targets: list) -> None:
        """This rank's replicas reduced here, then between the ranks by MPI."""
        MPI = _mpi()
        for i, (op, ufunc) in enumerate(ops):
            out = targets[0][i]
            if len(buffers) == 1:
                comm.Allreduce(buffers[0][i], out, op=op)
                continue
            ufunc(buffers[0][i], buffers[1][i], out=out)
            for b in buffers[2:]:
                ufunc(out, b[i], out=out)
            comm.Allreduce(MPI.IN_PLACE, out, op=op)
            for t in targets[1:]:
                np.copyto(t[i], out)

    def _fold(self, params: dict, groups: list, members: dict, targets: list) -> None:
        """Each group with replicas here reduced in group order (the reference)."""
        from .rendezvous import reduce_slice
        for group in groups:
            mine = [targets[m - self.base] for m in group if m in self.replicas_of(self.comm.rank)]
            for pos in range(len(group) if mine else 0):
                reduce_slice(params, pos, [members[m] for m in group], mine)

    def _plan(self, params: dict, buffers: Sequence[np.ndarray], signature: Any) -> tuple:
        """How an AllReduce runs, made once per AllReduce: ``mode`` "ranks"
        (each rank's replicas in one group: the group's ranks share a
        communicator), "local" (each group within one rank) or "general";
        the communicator; per operand (MPI op, ufunc) or None (the general
        path: MPI's MAX and MIN do not propagate NaN as XLA does, so floats
        take it); the groups."""
        plan = self.shared.get(("plan", signature))
        if plan is None:
            from .rendezvous import _ufunc_of
            MPI = _mpi()
            groups = co._groups_for("all_reduce", self.grid, params["replica_groups"],
                                    params["channel_id"], params["use_global_device_ids"])
            color = {m: c for c, g in enumerate(groups) for m in g}
            ops = []
            for graph, buf in zip(params["computation"], buffers):
                ufunc = _ufunc_of(graph, buf.dtype)
                nan_rule = buf.dtype.kind == "f" and ufunc in (np.maximum, np.minimum)
                ops.append((getattr(MPI, _MPI_OPS[ufunc]), ufunc)
                           if ufunc is not None and not nan_rule else None)
            colors = [{color[m] for m in self.replicas_of(r)} for r in range(self.comm.size)]
            if all(len(c) == 1 for c in colors):
                plan = ("ranks", self._group_comm(groups, colors[self.comm.rank].pop()), ops,
                        groups)
            elif all(len({m // self.local for m in g}) == 1 for g in groups):
                plan = ("local", None, ops, groups)
            else:
                plan = ("general", self.comm, ops, groups)
            self.shared[("plan", signature)] = plan
        return plan

    def _group_comm(self, groups: list[list[int]], color: int) -> Any:
        """The communicator of the ranks of group ``color`` (``Split`` is
        collective: every rank makes it at the same AllReduce)."""
        key = ("comm", tuple(map(tuple, groups)))
        comm = self.shared.get(key)
        if comm is None:
            comm = self.shared[key] = self.comm.Split(color, self.comm.rank)
        return comm

    # Point-to-point messages: send/recv with source_target_pairs, tagged by
    # channel and the replicas' places on their ranks, on the run's
    # communicator.  A rank that finishes tells every other one (tag
    # _done_tag), so a recv waiting for a message its source will never
    # send ends with an error at once.

    def _tag(self, channel_id: int, source: int, target: int) -> int:
        return (channel_id * self.local + source % self.local) * self.local + target % self.local

    @peer_faults
    def send(self, index: int, channel_id: int, target: int, value: Any) -> None:
        """A message to replica ``target`` on another rank (non-blocking:
        delivered at the latest when this rank finishes)."""
        from .rendezvous import CollectiveError
        tag = self._tag(channel_id, index, target)
        if tag >= self._done_tag:
            raise CollectiveError(f"send on channel {channel_id}: MPI tags go up to "
                                  f"{self._done_tag - 1}")
        self._sends.append((self.p2p.isend(value, dest=target // self.local, tag=tag),
                            channel_id, target))
        key = (channel_id, index, target)
        self._sent[key] = self._sent.get(key, 0) + 1

    @peer_faults
    def recv(self, index: int, channel_id: int, source: int,
             failed: Callable[[], Any] = lambda: None) -> Any:
        """The next message replica ``source`` (on another rank) sent replica
        ``index`` on the channel, polled against the timeout, ``source``'s
        rank finishing and ``failed()`` (this rank's run failed)."""
        from .rendezvous import CollectiveError
        what = f"recv on channel {channel_id} (replica {index} from replica {source})"
        rank, tag = source // self.local, self._tag(channel_id, source, index)
        self.doing = what
        deadline, pause = time.monotonic() + self.timeout, _Backoff()
        while not self.p2p.iprobe(source=rank, tag=tag):
            # (MPI orders messages of one tag only: look again once it said so)
            if self._finished(rank) and not self.p2p.iprobe(source=rank, tag=tag):
                raise CollectiveError(f"{what}: replica {source} finished without sending it")
            if failed() is not None:
                raise CollectiveError(f"{what}: the run failed: {failed()}")
            if time.monotonic() > deadline:
                raise CollectiveError(f"{what}: timed out after {self.timeout:g} s")
            pause()
        key = (channel_id, source, index)
        self._received[key] = self._received.get(key, 0) + 1
        return self.p2p.recv(source=rank, tag=tag)

    def _finished(self, rank: int) -> bool:
        """Whether ``rank`` said it finished."""
        with self._done_lock:
            if rank not in self._done and self.p2p.iprobe(source=rank, tag=self._done_tag):
                self.p2p.recv(source=rank, tag=self._done_tag)
                self._done.add(rank)
            return rank in self._done

    @peer_faults
    def finish(self, index: int, count: int) -> None:
        """This rank is done (all its replicas): it tells the others, the
        ranks agree (and check that every message sent was received), its
        messages are delivered, and last the others' word that they finished
        is taken."""
        from .rendezvous import CollectiveError
        if self.p2p is None:
            self._agree(count, _FINISHED, "finished", ("finished",))
            return
        me = self.comm.rank
        done = [self.p2p.isend(None, dest=rank, tag=self._done_tag)
                for rank in range(self.comm.size) if rank != me]
        balance = (_message_sum(self._sent), _message_sum(self._received))
        records = self._agree(count, _FINISHED, "finished", ("finished",), balance)
        sent = sum(r[4][0] for r in records) % (1 << 64)
        if sent != sum(r[4][1] for r in records) % (1 << 64):
            sent = ", ".join(f"{n} on channel {c} to replica {t}"
                             for (c, _, t), n in sorted(self._sent.items())) or "nothing"
            got = ", ".join(f"{n} on channel {c} from replica {s}"
                            for (c, s, _), n in sorted(self._received.items())) or "nothing"
            error = CollectiveError(f"send: messages never received ({self._who(me)} sent "
                                    f"{sent}; received {got})")
            error.ranks_know = True
            raise error
        deadline, pause = time.monotonic() + self.timeout, _Backoff()
        for request in [r for r, _, _ in self._sends] + done:
            while not request.Test():
                if time.monotonic() > deadline:
                    raise CollectiveError(f"finished: {self._who(me)}'s messages were not "
                                          f"delivered within {self.timeout:g} s")
                pause()
        for rank in range(self.comm.size):
            while rank != me and not self._finished(rank):  # sent before the agreement
                if time.monotonic() > deadline:
                    raise CollectiveError(f"finished: {self._who(rank)} agreed but its word "
                                          f"never came within {self.timeout:g} s")
                pause()
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
