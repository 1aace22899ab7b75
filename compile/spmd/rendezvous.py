"""The rendezvous of an SPMD run: where the processes of ``pmap`` (threads,
or MPI ranks: ``spmd/mpi.py``) meet at each collective.

The compiled function of a multi-process program lowers every collective to
a host callback (``lowering/collectives.py``); the callback hands this
process's operands to the :class:`Rendezvous` of the run, which waits for
every process to reach its collective number ``k``, checks they all reached
the same one, computes the results with the reference semantics
(``primitives.collectives``, so results are XLA's bit for bit) and gives
each process its own.

Faults are errors, not hangs: a process that raises, finishes early, or
reaches another collective than the others ends every process with an error
naming the collective and the processes; a process that never arrives ends
the wait after ``timeout`` seconds.
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Any, Sequence

import numpy as np

from numxla.primitives import collectives as co, side_effects as se
from numxla.primitives.reductions import single_binary_op
from numxla.tracer.core import Primitive


__all__ = ["Rendezvous", "CollectiveError", "current_process", "reduce_slice"]


class CollectiveError(RuntimeError):
    """The processes of an SPMD run did not meet at a collective."""


_SPIN_SECONDS = 3e-5  # how long a process yields at a rendezvous before it sleeps


class Rendezvous:
    """Where the processes of one run meet, collective by collective."""

    def __init__(self, grid: co.ProcessGrid, timeout: float, shared: dict | None = None):
        self.grid = grid
        self.timeout = timeout
        self.shared = {} if shared is None else shared  # see all_reduce_buffers
        self._cond = threading.Condition()
        # (collective number, phase) -> process -> (name, signature, payload)
        self._arrived: dict[tuple[int, int], dict[int, tuple[str, Any, Any]]] = {}
        self._taken: dict[tuple[int, int], int] = {}
        self._results: dict[int, list] = {}
        self._finished: dict[int, int] = {}  # process -> how many collectives it ran
        # point-to-point messages (send/recv with source_target_pairs):
        # (channel, source, target) -> values in the order they were sent
        self._mailboxes: dict[tuple[int, int, int], collections.deque] = {}
        self.error: BaseException | None = None

    def _fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error
        self._cond.notify_all()

    def abort(self, error: BaseException) -> None:
        """A process raised: every waiting process ends with an error."""
        with self._cond:
            self._fail(error)

    def finish(self, index: int, count: int) -> None:
        """Process ``index`` returned after ``count`` collectives."""
        with self._cond:
            self._finished[index] = count
            self._cond.notify_all()

    def _describe(self, key: tuple[int, int]) -> str:
        k = key[0]
        calls = self._arrived.get(key, {})
        parts = [f"{self.grid.name(i)} at {calls[i][0]}" for i in sorted(calls)]
        parts += [f"{self.grid.name(i)} finished after {n} collective(s)"
                  for i, n in sorted(self._finished.items()) if n <= k]
        missing = [self.grid.name(i) for i in range(self.grid.size)
                   if i not in calls and self._finished.get(i, k + 1) > k]
        if missing:
            parts.append(f"{', '.join(missing)} not arrived")
        return "; ".join(parts)

    def _meet(self, index: int, k: int, phase: int, name: str, signature: Any,
              payload: Any) -> dict[int, tuple[str, Any, Any]]:
        """Wait until every process has reached phase ``phase`` of its
        collective number ``k``; returns every process's (name, signature,
        payload).  Raises a ``CollectiveError`` on a mismatch, an early
        finish, a failed process or the timeout."""
        deadline = time.monotonic() + self.timeout
        key = (k, phase)
        spin_until = time.monotonic() + _SPIN_SECONDS
        with self._cond:
            calls = self._arrived.setdefault(key, {})
            calls[index] = (name, signature, payload)
            if any((n, sig) != (name, signature) for n, sig, _ in calls.values()):
                same_op = len({n for n, _, _ in calls.values()}) == 1
                what = (f"{name} with different parameters or operand types" if same_op
                        else "different collectives")
                self._fail(CollectiveError(f"collective #{k + 1}: the processes reached {what} "
                                           f"({self._describe(key)})"))
            self._cond.notify_all()
            while len(calls) < self.grid.size and self.error is None:
                if any(n <= k for n in self._finished.values()):
                    self._fail(CollectiveError(
                        f"{name} (collective #{k + 1}): not every process reaches it "
                        f"({self._describe(key)})"))
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._fail(CollectiveError(
                        f"{name} (collective #{k + 1}): timed out after {self.timeout:g} s "
                        f"waiting for the other processes ({self._describe(key)})"))
                    break
                if time.monotonic() < spin_until:  # the others are usually microseconds
                    self._cond.release()             # away: yield the GIL, don't sleep
                    time.sleep(0)
                    self._cond.acquire()
                else:
                    self._cond.wait(remaining)
            if self.error is not None:
                raise CollectiveError(f"{name} on {self.grid.name(index)}: "
                                      f"the run failed: {self.error}") from self.error
            self._taken[key] = self._taken.get(key, 0) + 1
            if self._taken[key] == self.grid.size:  # everyone has seen it: forget the call
                del self._arrived[key], self._taken[key]
            return calls

    def exchange(self, index: int, k: int, prim: Primitive, params: dict, operands: list,
                 signature: Any) -> list:
        """Process ``index``'s results of its collective number ``k``: the
        reference semantics over every process's operands, computed once."""
        calls = self._meet(index, k, 0, prim.name, signature, operands)
        with self._cond:
            if k not in self._results:
                ordered = [calls[i][2] for i in range(self.grid.size)]
                self._results[k] = [co.COLLECTIVE_SEMANTICS[prim](self.grid, ordered, **params),
                                    0]
            results = self._results[k]
            results[1] += 1
            if results[1] == self.grid.size:
                del self._results[k]
            return results[0][index]

    def all_reduce_buffers(self, index: int, k: int, params: dict, buffers: Sequence[np.ndarray],
                           outs: Sequence[np.ndarray] | None, signature: Any,
                           slot: str = "") -> Sequence[np.ndarray]:
        """AllReduce of row-major kernel buffers into every member's result
        buffers ``outs``; returns them.  Member ``j`` of a group reduces the
        ``j``-th slice of every operand and writes it into every member's
        result, the members working in parallel (NumPy releases the GIL).

        ``outs=None``: the results go to buffers kept between runs in
        ``shared``, which the compiled code asks for only when they die before
        the equation (``slot`` names it in the program) runs again.  When
        every member runs the same equation, the group shares one copy,
        written once instead of once per member; otherwise each member has
        its own (a member may still read its result of an equation that
        another member's different equation meets)."""
        calls = self._meet(index, k, 0, "all_reduce", signature, (buffers, outs, slot))
        group = _group_of(self.grid, params, index)
        members = [calls[m][2] for m in group]
        targets = [o for _, o, _ in members if o is not None]
        wanting = [(m, s) for m, (_, o, s) in zip(group, members) if o is None]
        with self._cond:
            if len(wanting) == len(group) and len({s for _, s in wanting}) == 1:
                common = _shared_results(self.shared, (signature, slot, tuple(group)), buffers)
                shared = dict.fromkeys(group, common)
                targets.append(common)
            else:
                shared = {m: _shared_results(self.shared, (signature, s, m), buffers)
                          for m, s in wanting}
                targets += shared.values()
        reduce_slice(params, group.index(index), [b for b, _, _ in members], targets)
        self._meet(index, k, 1, "all_reduce", signature, None)  # every slice written
        return shared[index] if outs is None else outs

    def send(self, index: int, channel_id: int, target: int, value: Any) -> None:
        """Process ``index`` sends ``value`` (an eager value it no longer
        writes) to ``target`` on channel ``channel_id``."""
        with self._cond:
            self._mailboxes.setdefault((channel_id, index, target), collections.deque()) \
                .append(value)
            self._cond.notify_all()

    def recv(self, index: int, channel_id: int, source: int) -> Any:
        """The next value ``source`` sent process ``index`` on the channel,
        waiting for it; an error if ``source`` finished without sending it,
        the run failed, or the timeout passed."""
        deadline = time.monotonic() + self.timeout
        what = (f"recv on channel {channel_id} ({self.grid.name(index)} from "
                f"{self.grid.name(source)})")
        with self._cond:
            box = self._mailboxes.setdefault((channel_id, source, index), collections.deque())
            while not box and self.error is None:
                remaining = deadline - time.monotonic()
                problem = (f"{self.grid.name(source)} finished without sending it"
                           if source in self._finished else
                           f"timed out after {self.timeout:g} s" if remaining <= 0 else None)
                if problem:
                    error = CollectiveError(f"{what}: {problem}")
                    self._fail(error)
                    raise error
                self._cond.wait(remaining)
            if not box:
                raise CollectiveError(f"{what}: the run failed: {self.error}") from self.error
            return box.popleft()

    def check_delivered(self) -> None:
        """After the run: every message sent was received."""
        left = [f"{len(q)} on channel {c} from {self.grid.name(s)} to {self.grid.name(t)}"
                for (c, s, t), q in sorted(self._mailboxes.items()) if q]
        if left:
            raise CollectiveError(f"send: messages never received: {'; '.join(left)}")


def _group_of(grid: co.ProcessGrid, params: dict, index: int) -> list[int]:
    """The replica group of an AllReduce that process ``index`` belongs to."""
    groups = co._groups_for("all_reduce", grid, params["replica_groups"], params["channel_id"],
                            params["use_global_device_ids"])
    return next(g for g in groups if index in g)


def _shared_results(pool: dict, key: Any, like: Sequence[np.ndarray]) -> tuple:
    """The result buffers ``pool`` holds for ``key``, made on first use."""
    results = pool.get(key)
    if results is None:
        results = pool[key] = tuple(np.empty_like(b) for b in like)
    return results


def reduce_slice(params: dict, pos: int, sources: Sequence[Sequence[np.ndarray]],
                 targets: Sequence[Sequence[np.ndarray]]) -> None:
    """Slice ``pos`` (of as many as there are sources) of the AllReduce of
    ``sources[m][i]`` over members ``m``, in member order, written into every
    ``targets[t][i]``: a ufunc for a plain add/mul/max/min of numbers, else
    the reference's element-wise combine (bit for bit either way)."""
    n = len(sources)
    for i, graph in enumerate(params["computation"]):
        size = sources[0][i].size
        lo, hi = size * pos // n, size * (pos + 1) // n
        parts = [s[i][lo:hi] for s in sources]
        first, *rest = [t[i][lo:hi] for t in targets]
        ufunc = _ufunc_of(graph, parts[0].dtype)
        if ufunc is not None and n > 1:
            ufunc(parts[0], parts[1], out=first)
            for part in parts[2:]:
                ufunc(first, part, out=first)
        else:
            acc = parts[0]
            for part in parts[1:]:
                acc = co._combine(graph, acc, part)
            first[...] = acc
        for t in rest:
            np.copyto(t, first)


_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _ufunc_of(graph: Any, dtype: np.dtype) -> Any:
    """The NumPy ufunc that is the reference semantics of a reducer that is
    one add/mul/max/min, for integer and real float buffers (bool add is
    logical or, complex max is lexicographic: those take the general path)."""
    prim = single_binary_op(graph)
    if prim is None or dtype.kind not in "iuf":
        return None
    return _UFUNCS.get(prim.name)


class _Process(threading.local):
    def __init__(self):
        self.rendezvous: Rendezvous | None = None
        self.index = 0
        self.count = 0

    def _next(self, op: str, count: bool = True) -> tuple[Any, int]:
        """The run's rendezvous and the number of this process's next
        collective (``count``: this op is one; messages are not)."""
        if self.rendezvous is None:
            raise RuntimeError(f"{op}: a program compiled for several processes runs only "
                               f"under pmap")
        k = self.count
        self.count += count
        return self.rendezvous, k

    def collective(self, prim: Primitive, params: dict, operands: list, signature: str) -> list:
        rendezvous, k = self._next(prim.name)
        return rendezvous.exchange(self.index, k, prim, params, operands, signature)

    def all_reduce_buffers(self, params: dict, buffers: Sequence[np.ndarray],
                           outs: Sequence[np.ndarray] | None, signature: str, slot: str = ""
                           ) -> Sequence[np.ndarray]:
        rendezvous, k = self._next("all_reduce")
        return rendezvous.all_reduce_buffers(self.index, k, params, buffers, outs, signature,
                                             slot)

    def send_to(self, channel_id: int, pairs: tuple, value: Any) -> None:
        rendezvous, _ = self._next("send", count=False)
        for source, target in pairs:
            if source == self.index:
                rendezvous.send(self.index, channel_id, target, value)

    def recv_from(self, channel_id: int, pairs: tuple, shape: Any) -> Any:
        rendezvous, _ = self._next("recv", count=False)
        source = {t: s for s, t in pairs}.get(self.index)
        if source is None:
            return se.zeros_value(shape)
        value = rendezvous.recv(self.index, channel_id, source)
        return se.check_received("recv", value, shape, f"{rendezvous.grid.name(source)} sent")


_process = _Process()


def current_process() -> _Process:
    """The calling thread's process of the SPMD run it belongs to."""
    return _process
