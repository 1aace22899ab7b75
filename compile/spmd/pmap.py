"""``pmap``: one compiled graph run on N replicas, one thread each (or on
MPI ranks, one or several replicas per rank: ``spmd/mpi.py``,
``spmd/hybrid.py``), whose collectives exchange data at a rendezvous
(``spmd/rendezvous.py``).  The compiled code between collectives
runs without the GIL (Numba ``nogil``), so replicas compute in parallel.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import os
import threading
import time
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from numxla.primitives import collectives as co
from numxla.tracer import pytree
from numxla.tracer.core import abstractify, bf16_array, eager_array
from numxla.tracer.shapes import PrimitiveType
from numxla.tracer.tracing import trace_pytree

from ..cache import cache_dir, disk_cache_usable
from ..jit import Compiled
from .mpi import mpi_world
from .rendezvous import CollectiveError, Rendezvous, _process

__all__ = ["pmap", "PmappedFunction"]


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


# After one replica fails, how long the others have to notice and return
# before the call raises without them (a replica stuck in an endless loop or
# a long host callback never looks at the rendezvous).
_GRACE_SECONDS = 1.0


class _ReplicasLeftRunning(Exception):
    """Carries the ``CollectiveError`` of a run whose replicas did not all stop."""

    def __init__(self, error: CollectiveError):
        super().__init__(str(error))
        self.error = error


def _join_replicas(threads: Sequence[threading.Thread], rendezvous: Rendezvous, *,
                   grace: float) -> list[threading.Thread]:
    """Wait for the replica threads; once the run has failed, wait at most
    ``grace`` seconds more.  Returns the threads still running."""
    give_up = None
    while True:
        alive = [t for t in threads if t.is_alive()]
        if not alive:
            return []
        if rendezvous.error is not None:
            now = time.monotonic()
            give_up = give_up or now + grace
            if now >= give_up:
                return alive
        alive[0].join(0.02)


def _compile_once(compiled: Compiled) -> None:
    """Compile ``compiled``'s missing kernels here and now, one process at a
    time (a lock file in the disk cache): MPI ranks reach the same program
    together, and all but the first load what it compiled instead of each
    compiling it again.  Without a usable disk cache, or when this compile
    fails, the first call compiles (and raises where every rank hears of it)."""
    if compiled.has_code() or not disk_cache_usable():
        return
    digest = hashlib.sha256(compiled.source.encode()).hexdigest()[:24]
    try:
        lock = open(cache_dir() / f"pmap-{digest}.lock", "w")
    except OSError:
        return
    with lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)   # released when closed, or when the holder dies
        except OSError:
            pass
        try:
            for call in compiled.missing_code():  # what the process before us left to do
                call.compile()
        except Exception:  # noqa: BLE001 (the first call compiles it again, and raises)
            pass


class _Program(NamedTuple):
    """A pmap-ed function compiled for some argument types."""
    compiled: Compiled
    out_dims: list            # per result: the axis its replicas stack on (None: one's)
    messages: bool            # it sends or receives point-to-point messages


def _as_jax_arrays(program: _Program, results: list[np.ndarray]) -> Any:
    """The stacked results as the program's output tree of eager arrays
    (JAX's arrays: ``.at``, JAX's promotion), bf16 ones from their words."""
    graph = program.compiled.graph
    return graph.out_tree.unflatten([
        bf16_array(r) if av.shape.element_type is PrimitiveType.BF16 else eager_array(r)
        for r, av in zip(results, graph.out_avals)])


class PmappedFunction:
    """``pmap(f)``: see :func:`pmap`."""

    def __init__(self, fn: Callable[..., Any], axis_name: str | None, num_replicas: int | None,
                 backend: str, timeout: float, num_partitions: int = 1, in_axes: Any = 0,
                 out_axes: Any = 0, global_arguments: bool = False,
                 local_devices: int | None = None):
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
        # MPI: processes per rank (threads), the same on every rank
        self.local = local_device_count() if local_devices is None else local_devices
        if isinstance(self.local, bool) or not isinstance(self.local, int) or self.local < 1:
            raise ValueError(f"pmap: local_devices must be a positive int, got {self.local!r}")
        if self.comm is not None:
            if self.num_processes not in (None, self.comm.size * self.local):
                raise ValueError(f"pmap(backend='mpi'): num_replicas={num_replicas} x "
                                 f"num_partitions={num_partitions} but there are "
                                 f"{self.comm.size} MPI ranks x {self.local} local devices")
            self.num_processes = self.comm.size * self.local
        self.timeout = timeout
        # MPI: every rank passes (and gets back) only its own replica's slices,
        # unless global_arguments (every rank passes and gets everything)
        self.local_shards = self.comm is not None and not global_arguments
        self._cache: dict[Any, _Program] = {}
        self._shared_pools: list[dict] = []  # idle pools of shared AllReduce results
        self._lock = threading.Lock()
        self.__name__ = getattr(fn, "__name__", "pmapped")

    def _mapped(self, args: tuple) -> tuple[list[np.ndarray], list[int | None], pytree.TreeDef]:
        """The arguments' leaves as arrays, the axis ``in_axes`` maps each on
        (``None``: whole to every process), and their structure."""
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
        return arrays, axes, tree

    def _split(self, args: tuple) -> tuple[int, list[list[Any]], pytree.TreeDef]:
        """The number of processes, each one's argument leaves, the arguments'
        structure: leaves mapped by ``in_axes`` are split along that axis,
        those with ``None`` go whole to every process."""
        arrays, axes, tree = self._mapped(args)
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
                    _compile_once(compiled)
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
        if self.local_shards:
            return self._call_local(args)
        n, per_replica, tree = self._split(args)
        program = self._program(n, tree, per_replica[0])
        run = self._run_mpi if self.comm is not None else self._run_threads
        results = self._pooled(lambda shared: run(program, n, per_replica, shared))
        # out_axes None: the value is the same on every process (JAX's promise): one's
        stacked = [np.asarray(results[0][j]) if d is None else
                   np.stack([np.asarray(results[i][j]) for i in range(n)], axis=d)
                   for j, d in enumerate(program.out_dims)]
        return _as_jax_arrays(program, stacked)

    def _pooled(self, run: Callable[[dict], Any]) -> Any:
        """``run(shared)`` with a pool of AllReduce results: one pool per
        concurrent call, kept between calls (no fresh buffers), except one
        that replicas left running still use."""
        try:
            shared = self._shared_pools.pop()
        except IndexError:
            shared = {}
        try:
            return run(shared)
        except _ReplicasLeftRunning as stuck:
            shared = None
            raise stuck.error from None
        finally:
            if shared is not None:
                self._shared_pools.append(shared)

    def _run_threads(self, program: _Program, n: int, per_replica: list, shared: dict
                     ) -> list:
        rendezvous = Rendezvous(self._grid(n), self.timeout, shared)
        return self._in_threads(program.compiled, per_replica, rendezvous)

    def _in_threads(self, compiled: Compiled, per_replica: list, rendezvous: Any,
                    first: int = 0) -> list:
        """Replicas ``first, first + 1, ...`` (one per entry of
        ``per_replica``), one thread each: their results."""
        n = len(per_replica)
        results: list[Any] = [None] * n
        errors: list[BaseException | None] = [None] * n
        threads = [threading.Thread(target=_run_process, daemon=True,
                                    name=f"replica-{first + i}",
                                    args=(compiled, per_replica[i], rendezvous, first + i,
                                          results, errors, i))
                   for i in range(n)]
        for t in threads:
            t.start()
        stuck = _join_replicas(threads, rendezvous, grace=min(self.timeout, _GRACE_SECONDS))
        raised = [e for e in errors if e is not None]
        if stuck:
            names = ", ".join(t.name for t in stuck)
            error = CollectiveError(
                f"{rendezvous.error}; {names} did not stop within "
                f"{min(self.timeout, _GRACE_SECONDS):g} s of that failure and "
                f"{'is' if len(stuck) == 1 else 'are'} left running in the background "
                f"(a thread cannot be killed); the next call starts afresh")
            raise _ReplicasLeftRunning(error)
        if raised:
            # the process that failed first, not those its failure woke up
            raise rendezvous.error if rendezvous.error in raised else raised[0]
        rendezvous.check_delivered()
        return results

    def _run_mpi(self, program: _Program, n: int, per_replica: list, shared: dict) -> list:
        """This rank runs its replicas; every rank gets every replica's results
        that are stacked (``out_dims`` not None), its own of the others."""
        first = self.comm.rank * self.local
        own = self._run_rank(program, n, per_replica[first:first + self.local], shared)
        dims = program.out_dims
        gathered = self.comm.allgather([[r for r, d in zip(res, dims) if d is not None]
                                        for res in own])
        return [[next(parts) if d is not None else r for r, d in zip(own[0], dims)]
                for parts in map(iter, (p for part in gathered for p in part))]

    def _run_rank(self, program: _Program, n: int, own: list, shared: dict) -> list:
        """This rank's replicas of an ``n``-process run (``own``: each one's
        argument leaves): their results, one thread each when several."""
        from .hybrid import RankThreads
        from .mpi import MPIRendezvous
        rendezvous = MPIRendezvous(self.comm, self._grid(n), self.timeout, shared,
                                   program.messages, local=len(own))
        if len(own) > 1:
            results = self._in_threads(program.compiled, own, RankThreads(rendezvous),
                                       first=rendezvous.base)
        else:
            results, errors = [None], [None]
            _run_process(program.compiled, own[0], rendezvous, rendezvous.base, results,
                         errors, slot=0)
            if errors[0] is not None:
                raise errors[0]
        return [[np.asarray(r) for r in res] for res in results]

    def _call_local(self, args: tuple) -> Any:
        """MPI with local shards (JAX's multi-process convention): the mapped
        arguments carry this rank's replicas only (their mapped axes of size
        ``local_devices``), the results are this rank's (``out_axes=None``
        ones the value every replica has)."""
        arrays, axes, tree = self._mapped(args)
        sizes = {a.shape[d] for a, d in zip(arrays, axes) if d is not None}
        if sizes - {self.local}:
            raise ValueError(f"pmap(backend='mpi'): rank {self.comm.rank} passed mapped axes "
                             f"of sizes {sorted(sizes)}; each rank passes its own replicas' "
                             f"slices (size local_devices={self.local}; global_arguments=True "
                             f"takes the whole batch on every rank)")
        own = [[a if d is None else np.take(a, j, axis=d) for a, d in zip(arrays, axes)]
               for j in range(self.local)]
        self._agree(tree, arrays)
        n = self.num_processes
        if n % self.num_partitions:
            raise ValueError(f"pmap: {n} processes do not split into num_partitions="
                             f"{self.num_partitions} partitions")
        program = self._program(n, tree, own[0])
        results = self._pooled(lambda shared: self._run_rank(program, n, own, shared))
        return _as_jax_arrays(program, [
            results[0][j] if d is None else np.stack([r[j] for r in results], axis=d)
            for j, d in enumerate(program.out_dims)])

    def _agree(self, tree: pytree.TreeDef, arrays: list[np.ndarray]) -> None:
        """Every rank checks that all ranks call with the same structure,
        shapes and types: a clear error on each of them, not a hang."""
        mine = f"{tree} " + " ".join(f"{a.dtype}{list(a.shape)}" for a in arrays)
        every = self.comm.allgather(mine)
        if any(other != mine for other in every):
            lines = "; ".join(f"rank {r}: {text}" for r, text in enumerate(every))
            raise ValueError(f"pmap(backend='mpi'): the ranks called with different "
                             f"arguments ({lines})")


def local_device_count() -> int:
    """Replicas per MPI rank by default: ``NUMXLA_DEVICE_COUNT`` (as XLA's
    ``--xla_force_host_platform_device_count``, devices per process), else 1."""
    return max(1, int(os.environ.get("NUMXLA_DEVICE_COUNT", "1")))


def pmap(fn: Callable[..., Any] | None = None, axis_name: str | None = None,
         num_replicas: int | None = None, backend: str | None = "threads",
         timeout: float = 60.0, *, num_partitions: int = 1, in_axes: Any = 0,
         out_axes: Any = 0, global_arguments: bool = False, local_devices: int | None = None,
         static_broadcasted_argnums: int | Sequence[int] = (), donate_argnums: Any = (),
         devices: Sequence[Any] | None = None, axis_size: int | None = None) -> Any:
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
    one thread per replica in this process.  ``backend="mpi"``: MPI ranks
    (``mpiexec -n N``) of ``local_devices`` replicas each (threads; default
    ``local_device_count()``, ``NUMXLA_DEVICE_COUNT`` or 1), rank ``r``
    running replicas ``r*L .. r*L+L-1``, in JAX's multi-process convention:
    each rank passes only its own replicas' slices (mapped axes of size
    ``L``) and gets back its own results (``out_axes=None`` ones whole); a
    rank whose arguments' shapes differ from the others' raises on every
    rank.  ``global_arguments=True``: every rank passes the same global
    arguments and gets every stacked result.
    ``timeout``: seconds a replica waits at a collective for the others
    before the run fails with a ``CollectiveError``.

    ``num_partitions``: XLA's processes are replicas x partitions; with
    ``num_partitions=P`` slice ``i`` of the leading axis runs as replica
    ``i // P``, partition ``i % P`` (``lax.partition_id``), and the
    collectives' ``channel_id``/``use_global_device_ids`` group partitions as
    the document defines.  The axis name spans the replicas.

    JAX's other arguments: ``static_broadcasted_argnums`` (positional
    arguments passed as Python values to every replica, one program per
    value; their ``in_axes`` entries are dropped), ``devices`` and
    ``axis_size`` (the number of replicas), ``donate_argnums`` (accepted:
    nothing is donated), and ``backend="cpu"`` or ``None`` (threads).
    """
    if fn is None:
        return lambda f: pmap(f, axis_name, num_replicas, backend, timeout,
                              num_partitions=num_partitions, in_axes=in_axes, out_axes=out_axes,
                              global_arguments=global_arguments, local_devices=local_devices,
                              static_broadcasted_argnums=static_broadcasted_argnums,
                              donate_argnums=donate_argnums, devices=devices,
                              axis_size=axis_size)
    backend = "threads" if backend in (None, "cpu") else backend
    if backend not in ("threads", "mpi"):
        raise ValueError(f"pmap: unknown backend {backend!r} (available: 'threads', 'mpi')")
    if num_replicas is None:
        num_replicas = len(devices) if devices is not None else axis_size
    static = (static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int) \
        else tuple(static_broadcasted_argnums)
    make = functools.partial(PmappedFunction, axis_name=axis_name, num_replicas=num_replicas,
                             backend=backend, timeout=float(timeout),
                             num_partitions=num_partitions, out_axes=out_axes,
                             global_arguments=global_arguments, local_devices=local_devices)
    if static:
        return _StaticArgsPmap(fn, static, in_axes, make)
    return make(fn, in_axes=in_axes)


class _StaticArgsPmap:
    """``pmap`` with ``static_broadcasted_argnums``: one pmapped function per
    tuple of static values (hashable, as jit's static arguments), over the
    other positional arguments."""

    def __init__(self, fn: Callable[..., Any], static: tuple[int, ...], in_axes: Any,
                 make: Callable[..., PmappedFunction]):
        self.fn, self.static, self.in_axes, self.make = fn, static, in_axes, make
        self._by_static: dict[tuple, PmappedFunction] = {}
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args: Any) -> Any:
        static = sorted(i % len(args) for i in self.static)
        key = tuple(args[i] for i in static)
        try:
            hash(key)
        except TypeError:
            raise ValueError(f"pmap: static_broadcasted_argnums {self.static} must be hashable "
                             f"(got {tuple(type(v).__name__ for v in key)})") from None
        dynamic = [i for i in range(len(args)) if i not in static]
        mapped = self._by_static.get((len(args), key))
        if mapped is None:
            def with_static(*dyn: Any) -> Any:
                full = dict(zip(dynamic, dyn))
                full.update(zip(static, key))
                return self.fn(*(full[i] for i in range(len(args))))
            in_axes = self.in_axes
            if isinstance(in_axes, (list, tuple)) and len(in_axes) == len(args):
                in_axes = tuple(in_axes[i] for i in dynamic)
            with_static.__name__ = getattr(self.fn, "__name__", "pmapped")
            mapped = self._by_static[(len(args), key)] = self.make(with_static, in_axes=in_axes)
        return mapped(*(args[i] for i in dynamic))
