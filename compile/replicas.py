"""SPMD programs for real: ``pmap`` runs one compiled graph on N replicas,
one thread each (or one MPI rank each: ``replicas_mpi.py``), whose
collectives exchange data at a rendezvous.

The compiled function of a multi-process program lowers every collective to
a host callback (``kernels/collectives.py``); the callback hands this
process's operands to the :class:`Rendezvous` of the run, which waits for
every process to reach its collective number ``k``, checks they all reached
the same one, computes the results with the reference semantics
(``primitives.collectives``, so results are XLA's bit for bit) and gives
each process its own.  The compiled code between collectives runs without
the GIL (Numba ``nogil``), so replicas compute in parallel.

Faults are errors, not hangs: a process that raises, finishes early, or
reaches another collective than the others ends every process with an error
naming the collective and the processes; a process that never arrives ends
the wait after ``timeout`` seconds.
"""
from __future__ import annotations

import collections
import threading
import time
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from primitives import collectives as co, side_effects as se
from primitives.reductions import single_binary_op
from tracer import pytree
from tracer.core import Primitive, abstractify
from tracer.tracing import trace_pytree

from .jit import Compiled
from .replicas_mpi import mpi_world

__all__ = ["pmap", "Rendezvous", "CollectiveError", "current_process"]


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


def _run_process(compiled: Compiled, leaves: Sequence[Any], rendezvous: Any, index: int,
                 results: list, errors: list, slot: int | None = None) -> None:
    """Run replica ``index``; its results (or error) go to ``results[slot]``
    (``errors[slot]``), ``slot`` defaulting to ``index``."""
    slot = index if slot is None else slot
    _process.rendezvous, _process.index, _process.count = rendezvous, index, 0
    try:
        results[slot] = compiled.call_flat(leaves)
        rendezvous.finish(index, _process.count)
    except BaseException as error:  # noqa: BLE001 (re-raised by the caller)
        errors[slot] = error
        rendezvous.abort(error)
    finally:
        _process.rendezvous = None


class _Program(NamedTuple):
    """A pmap-ed function compiled for some argument types."""
    compiled: Compiled
    out_dims: list            # per result: the axis its replicas stack on (None: one's)
    messages: bool            # it sends or receives point-to-point messages


class PmappedFunction:
    """``pmap(f)``: see :func:`pmap`."""

    def __init__(self, fn: Callable[..., Any], axis_name: str | None, num_replicas: int | None,
                 backend: str, timeout: float, num_partitions: int = 1, in_axes: Any = 0,
                 out_axes: Any = 0):
        if isinstance(num_partitions, bool) or not isinstance(num_partitions, int) or \
                num_partitions < 1:
            raise ValueError(f"pmap: num_partitions must be a positive int, got "
                             f"{num_partitions!r}")
        self.fn = fn
        self.num_partitions = num_partitions
        self.in_axes, self.out_axes = in_axes, out_axes
        self.axis_name = axis_name
        self.backend = backend
        self.comm = mpi_world() if backend == "mpi" else None
        # the number of processes: replicas x partitions, one per slice of the leading axis
        self.num_processes = None if num_replicas is None else num_replicas * num_partitions
        if self.comm is not None:
            if self.num_processes not in (None, self.comm.size):
                raise ValueError(f"pmap(backend='mpi'): num_replicas={num_replicas} x "
                                 f"num_partitions={num_partitions} but there are "
                                 f"{self.comm.size} MPI ranks (one process per rank)")
            self.num_processes = self.comm.size
        self.timeout = timeout
        self._cache: dict[Any, _Program] = {}
        self._shared_pools: list[dict] = []  # idle pools of shared AllReduce results
        self._lock = threading.Lock()
        self.__name__ = getattr(fn, "__name__", "pmapped")

    def _split(self, args: tuple) -> tuple[int, list[list[Any]], pytree.TreeDef]:
        """The number of processes, each one's argument leaves, the arguments'
        structure: leaves mapped by ``in_axes`` are split along that axis,
        those with ``None`` go whole to every process."""
        leaves, tree = pytree.flatten(args)
        if isinstance(self.in_axes, (list, tuple)) and len(self.in_axes) != len(args):
            raise ValueError(f"pmap: in_axes has {len(self.in_axes)} entries for {len(args)} "
                             f"positional arguments")
        dims = pytree.axes_for_leaves(self.in_axes if isinstance(self.in_axes, (int, type(None)))
                                      else tuple(self.in_axes), args, "pmap", "in_axes")
        arrays = [np.asarray(x) for x in leaves]
        axes = []
        for a, d in zip(arrays, dims):
            if d is not None and not -a.ndim <= d < a.ndim:
                raise ValueError(f"pmap: in_axes {d} is out of range for an argument of shape "
                                 f"{a.shape} (every mapped argument needs that axis to split "
                                 f"over the processes)")
            axes.append(None if d is None else d % a.ndim)
        sizes = {a.shape[d] for a, d in zip(arrays, axes) if d is not None}
        n = self.num_processes if self.num_processes is not None else (
            sizes.pop() if len(sizes) == 1 else None)
        if n is None or sizes - {n}:
            raise ValueError(f"pmap: the arguments' mapped axes have sizes {sorted(sizes)}; "
                             f"they must all equal the number of processes (replicas x "
                             f"partitions)")
        if n % self.num_partitions:
            raise ValueError(f"pmap: {n} processes do not split into num_partitions="
                             f"{self.num_partitions} partitions")
        return n, [[a if d is None else np.take(a, i, axis=d) for a, d in zip(arrays, axes)]
                   for i in range(n)], tree

    def _program(self, n: int, tree: pytree.TreeDef, first: list[Any]) -> _Program:
        """The compiled program for ``n`` processes and these argument types
        (traced and compiled on first use), with what every call needs of it."""
        key = (n, tree, tuple((abstractify(x).element_type, abstractify(x).dimensions)
                              for x in first))
        program = self._cache.get(key)
        if program is None:
            with self._lock:
                program = self._cache.get(key)
                if program is None:
                    grid = self._grid(n)
                    with co.axis_name_bound(self.axis_name, grid.num_replicas):
                        graph, _ = trace_pytree(self.fn, tree.unflatten(first), name=self.__name__)
                    shapes = [av.shape for av in graph.out_avals]
                    compiled = Compiled(graph, shapes, process_grid=grid)
                    out_dims = pytree.axes_for_leaves(
                        self.out_axes, graph.out_tree.unflatten(range(len(shapes))), "pmap",
                        "out_axes")
                    messages = any(f in compiled.source for f in ("host_send_to",
                                                                  "host_recv_from"))
                    program = self._cache[key] = _Program(compiled, out_dims, messages)
        return program

    def _grid(self, n: int) -> co.ProcessGrid:
        return co.ProcessGrid(n // self.num_partitions, self.num_partitions)

    def __call__(self, *args: Any) -> Any:
        n, per_replica, tree = self._split(args)
        program = self._program(n, tree, per_replica[0])
        run = self._run_mpi if self.comm is not None else self._run_threads
        try:  # one pool per concurrent call, kept between calls: no fresh buffers
            shared = self._shared_pools.pop()
        except IndexError:
            shared = {}
        try:
            results = run(program, n, per_replica, shared)
        finally:
            self._shared_pools.append(shared)
        # out_axes None: the value is the same on every process (JAX's promise): one's
        stacked = [np.asarray(results[0][j]) if d is None else
                   np.stack([np.asarray(results[i][j]) for i in range(n)], axis=d)
                   for j, d in enumerate(program.out_dims)]
        return program.compiled.graph.out_tree.unflatten(stacked)

    def _run_threads(self, program: _Program, n: int, per_replica: list, shared: dict
                     ) -> list:
        compiled = program.compiled
        rendezvous = Rendezvous(self._grid(n), self.timeout, shared)
        results: list[Any] = [None] * n
        errors: list[BaseException | None] = [None] * n
        threads = [threading.Thread(target=_run_process, daemon=True, name=f"replica-{i}",
                                    args=(compiled, per_replica[i], rendezvous, i, results,
                                          errors))
                   for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        raised = [e for e in errors if e is not None]
        if raised:
            # the process that failed first, not those its failure woke up
            raise rendezvous.error if rendezvous.error in raised else raised[0]
        rendezvous.check_delivered()
        return results

    def _run_mpi(self, program: _Program, n: int, per_replica: list, shared: dict) -> list:
        """This rank runs its replica; every rank gets every replica's results
        that are stacked (``out_dims`` not None), its own of the others."""
        from .replicas_mpi import MPIRendezvous
        rank = self.comm.rank
        rendezvous = MPIRendezvous(self.comm, self._grid(n), self.timeout, shared,
                                   program.messages)
        results: list[Any] = [None]
        errors: list[BaseException | None] = [None]
        _run_process(program.compiled, per_replica[rank], rendezvous, rank, results, errors,
                     slot=0)
        if errors[0] is not None:
            raise errors[0]
        own = [np.asarray(r) for r in results[0]]
        dims = program.out_dims
        gathered = self.comm.allgather([r for r, d in zip(own, dims) if d is not None])
        return [[next(parts) if d is not None else r for r, d in zip(own, dims)]
                for parts in map(iter, gathered)]


def pmap(fn: Callable[..., Any] | None = None, axis_name: str | None = None,
         num_replicas: int | None = None, backend: str = "threads", timeout: float = 60.0, *,
         num_partitions: int = 1, in_axes: Any = 0, out_axes: Any = 0) -> Any:
    """JAX's ``pmap``: ``fn`` compiled once and run on ``num_replicas``
    replicas (default: the size of the arguments' mapped axis), replica ``i``
    getting slice ``i`` of every argument; results stacked along a new
    leading axis.  ``in_axes`` (an int, ``None``, or a tuple with a prefix
    pytree per positional argument, as ``vmap``'s) says which axis of each
    argument is split (``None``: every replica gets the whole value, as
    parameters in data-parallel training); ``out_axes`` where each result's
    replicas are stacked (``None``: a result the same on every replica,
    given once).

    Inside ``fn`` the XLA collectives (``lax.all_reduce`` ...) exchange data
    between replicas, and ``axis_name`` binds the JAX-style spellings
    (``psum``, ``pmean``, ``pmax``, ``pmin``, ``ppermute``, ``axis_index``,
    ``all_gather``, ``all_to_all`` of ``primitives``).  ``backend="threads"``:
    one thread per replica in this process.  ``backend="mpi"``: one replica
    per MPI rank (``mpiexec -n N``; every rank passes the same global
    arguments and gets every stacked result).
    ``timeout``: seconds a replica waits at a collective for the others
    before the run fails with a ``CollectiveError``.

    ``num_partitions``: XLA's processes are replicas x partitions; with
    ``num_partitions=P`` slice ``i`` of the leading axis runs as replica
    ``i // P``, partition ``i % P`` (``lax.partition_id``), and the
    collectives' ``channel_id``/``use_global_device_ids`` group partitions as
    the document defines.  The axis name spans the replicas.
    """
    if fn is None:
        return lambda f: pmap(f, axis_name, num_replicas, backend, timeout,
                              num_partitions=num_partitions, in_axes=in_axes, out_axes=out_axes)
    if backend not in ("threads", "mpi"):
        raise ValueError(f"pmap: unknown backend {backend!r} (available: 'threads', 'mpi')")
    return PmappedFunction(fn, axis_name, num_replicas, backend, float(timeout), num_partitions,
                           in_axes, out_axes)
