"""Several replicas per MPI rank: one thread each, meeting at
:class:`RankThreads`; the last replica of the rank to reach a collective
makes the rank's MPI call (``MPIRendezvous``'s ``*_local`` methods) for all
of them, and each takes its own result.  Messages between replicas of one
rank stay in the rank; the others are MPI messages.

Errors are the rank's: a replica that raises, finishes early or reaches
another collective than its siblings ends them all, and the rank tells the
other ranks once (``abort``).  MPI calls of collectives never overlap: one
starts only when every replica of the rank has reached it.
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Any, Callable, Sequence

import numpy as np

from .mpi import MPIRendezvous
from .rendezvous import CollectiveError

__all__ = ["RankThreads"]


class RankThreads:
    """The rendezvous of one rank's replica threads."""

    def __init__(self, ranks: MPIRendezvous):
        self.ranks = ranks
        self.grid, self.timeout = ranks.grid, ranks.timeout
        self.local, self.base = ranks.local, ranks.base
        self._cond = threading.Condition()
        self._calls: dict[int, dict[int, tuple]] = {}   # k -> replica -> (name, sig, payload)
        self._results: dict[int, list] = {}             # k -> [results by replica, taken]
        self._finished: dict[int, int] = {}             # replica -> collectives it ran
        self._mail: dict[tuple[int, int, int], collections.deque] = {}
        self._told = False   # the rank said its last word to the others (failed or finished)
        self.error: BaseException | None = None

    def _fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        self._cond.notify_all()

    def _together(self, index: int, k: int, name: str, signature: Any, payload: Any,
                  work: Callable[[list], list]) -> Any:
        """Replica ``index``'s share of ``work(every replica's payload)``,
        which the last replica of the rank to reach collective ``k`` runs."""
        me = index - self.base
        deadline = time.monotonic() + self.timeout
        with self._cond:
            calls = self._calls.setdefault(k, {})
            calls[me] = (name, signature, payload)
            if any(c[:2] != (name, signature) for c in calls.values()):
                self._fail(CollectiveError(
                    f"collective #{k + 1}: the replicas of rank {self.ranks.comm.rank} reached "
                    f"different collectives or parameters ({self._describe(k)})"))
            last = len(calls) == self.local and self.error is None
            while not last and k not in self._results and self.error is None:
                remaining = deadline - time.monotonic()
                problem = ("not every process reaches it"
                           if any(n <= k for n in self._finished.values()) else
                           f"timed out after {self.timeout:g} s" if remaining <= 0 else None)
                if problem:
                    self._fail(CollectiveError(f"{name} (collective #{k + 1}): {problem} "
                                               f"({self._describe(k)})"))
                    break
                self._cond.wait(remaining)
            if self.error is not None:
                raise CollectiveError(f"{name} on {self.grid.name(index)}: the run failed: "
                                      f"{self.error}") from self.error
        if last:
            try:
                out = work([calls[j][2] for j in range(self.local)])
            except BaseException as error:
                with self._cond:
                    self._fail(error)
                raise
            with self._cond:
                del self._calls[k]
                self._results[k] = [out, 0]
                self._cond.notify_all()
        with self._cond:
            entry = self._results[k]
            entry[1] += 1
            if entry[1] == self.local:
                del self._results[k]
            return entry[0][me]

    def _describe(self, k: int) -> str:
        calls = self._calls.get(k, {})
        parts = [f"{self.grid.name(self.base + j)} at {calls[j][0]}" for j in sorted(calls)]
        parts += [f"{self.grid.name(self.base + j)} finished after {n} collective(s)"
                  for j, n in sorted(self._finished.items()) if n <= k]
        return "; ".join(parts)

    def exchange(self, index: int, k: int, prim: Any, params: dict, operands: list,
                 signature: Any) -> list:
        return self._together(index, k, prim.name, signature, operands, lambda every: (
            self.ranks.exchange_local(k, prim, params, every, signature)))

    def all_reduce_buffers(self, index: int, k: int, params: dict, buffers: Sequence[np.ndarray],
                           outs: Sequence[np.ndarray] | None, signature: Any,
                           slot: str = "") -> Sequence[np.ndarray]:
        def work(every: list) -> list:
            return self.ranks.all_reduce_local(k, params, [b for b, _, _ in every],
                                               [o for _, o, _ in every],
                                               signature, [s for _, _, s in every])
        return self._together(index, k, "all_reduce", signature, (buffers, outs, slot), work)

    def send(self, index: int, channel_id: int, target: int, value: Any) -> None:
        if target - self.base not in range(self.local):
            return self.ranks.send(index, channel_id, target, value)
        with self._cond:
            self._mail.setdefault((channel_id, index, target), collections.deque()).append(value)
            self._cond.notify_all()

    def recv(self, index: int, channel_id: int, source: int) -> Any:
        if source - self.base not in range(self.local):
            return self.ranks.recv(index, channel_id, source, lambda: self.error)
        what = (f"recv on channel {channel_id} ({self.grid.name(index)} from "
                f"{self.grid.name(source)})")
        deadline = time.monotonic() + self.timeout
        with self._cond:
            box = self._mail.setdefault((channel_id, source, index), collections.deque())
            while not box and self.error is None:
                remaining = deadline - time.monotonic()
                problem = (f"{self.grid.name(source)} finished without sending it"
                           if source - self.base in self._finished else
                           f"timed out after {self.timeout:g} s" if remaining <= 0 else None)
                if problem:
                    self._fail(CollectiveError(f"{what}: {problem}"))
                    break
                self._cond.wait(remaining)
            if not box:
                raise CollectiveError(f"{what}: the run failed: {self.error}") from self.error
            return box.popleft()

    def finish(self, index: int, count: int) -> None:
        """Replica ``index`` returned; the last of the rank's replicas says
        the rank finished (unless the run failed)."""
        with self._cond:
            self._finished[index - self.base] = count
            self._cond.notify_all()
            if len(self._finished) < self.local or self.error is not None or self._told:
                return
        left = [f"{len(q)} on channel {c} from {self.grid.name(s)} to {self.grid.name(t)}"
                for (c, s, t), q in sorted(self._mail.items()) if q]
        if left:
            raise CollectiveError(f"send: messages never received: {'; '.join(left)}")
        with self._cond:
            self._told = True
        self.ranks.finish(index, count)

    def abort(self, error: BaseException) -> None:
        """A replica raised: its siblings end, and the rank tells the others once."""
        with self._cond:
            self._fail(error)
            first, told, self._told = self.error, self._told, True
        if not told:
            self.ranks.abort(first)

    def check_delivered(self) -> None:
        """(Checked by ``finish``.)"""
