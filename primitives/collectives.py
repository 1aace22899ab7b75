"""Collectives: AllReduce, AllGather, AllToAll, ReduceScatter, CollectivePermute,
CollectiveBroadcast, CrossReplicaSum, ReplicaId and PartitionId.

An XLA program runs as ``num_replicas x num_partitions`` processes; process
``(replica, partition)`` has the flat index ``replica * num_partitions +
partition`` (its "global device id").  A collective combines the operands of
the processes of each *process group*.  Which processes form a group follows
from ``replica_groups``, ``channel_id`` and ``use_global_device_ids``, as
XLA's ``CollectiveOpGroupMode`` (and StableHLO) define it:

=============================  ===========================  ===================================
channel_id, use_global_ids     mode                         a group ``g`` of ``replica_groups``
=============================  ===========================  ===================================
None                           CROSS_REPLICA                replicas ``g`` of each partition
set (ops without the flag)     CROSS_PARTITION              partitions ``g`` of each replica
set, False                     CROSS_REPLICA_AND_PARTITION  replicas ``g`` of all partitions
set, True                      FLATTENED_ID                 the processes ``g`` themselves
=============================  ===========================  ===================================

Empty ``replica_groups`` mean one group of all replicas (all partitions for
CROSS_PARTITION).

Reference semantics work on the list of per-process operands: each
collective has a function in :data:`COLLECTIVE_SEMANTICS` taking the process
grid and, for every process, the tuple of its operands, and returning every
process's results.  :func:`run_replicated` traces a function into a graph and
interprets it over all processes in lockstep, handing each collective
equation the operands of every process (a runner on real threads would call
the same functions after a rendezvous).  An eager call outside
``run_replicated`` is a program of one replica and one partition.
"""
from __future__ import annotations

import contextlib
import dataclasses
import enum
import threading
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import (AbstractValue, EvalInterpreter, Primitive, ShapeError, abstractify,
                         array_value, bf16_array, current_interpreter, set_interpreter, to_numpy)
from numxla.tracer.graph import Graph, Literal, eval_graph
from numxla.tracer.shapes import PrimitiveType as PT
from numxla.tracer.tracing import trace_pytree

from ._subgraph import scalar_avals, trace_computation
from ._util import canonical_dims
from .elementwise import BINARY_PRIMITIVES, UNARY_PRIMITIVES, add, convert_element_type, div
from . import side_effects as se
from .shape_ops import expand_dims, squeeze
from .elementwise import max as lax_max, min as lax_min

__all__ = [
    "all_reduce", "all_gather", "all_to_all", "reduce_scatter", "collective_permute",
    "collective_broadcast", "cross_replica_sum", "replica_id", "partition_id",
    "run_replicated", "ProcessGrid", "GroupMode", "axis_name_bound", "psum", "pmean", "pmax",
    "pmin", "ppermute", "axis_index",
]


# --------------------------------------------------------------------------
# processes and process groups
# --------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ProcessGrid:
    """The ``num_replicas x num_partitions`` processes of a program."""

    num_replicas: int = 1
    num_partitions: int = 1

    @property
    def size(self) -> int:
        return self.num_replicas * self.num_partitions

    def index(self, replica: int, partition: int) -> int:
        return replica * self.num_partitions + partition

    def ids(self, index: int) -> tuple[int, int]:
        """``(replica_id, partition_id)`` of the process with flat index ``index``."""
        return divmod(index, self.num_partitions)

    def name(self, index: int) -> str:
        """How errors name process ``index``: ``replica 3``, or with partitions
        ``process (replica 1, partition 0)``."""
        replica, partition = self.ids(index)
        return f"replica {replica}" if self.num_partitions == 1 else \
            f"process (replica {replica}, partition {partition})"


class GroupMode(enum.Enum):
    """XLA's CollectiveOpGroupMode."""

    CROSS_REPLICA = "cross_replica"
    CROSS_PARTITION = "cross_partition"
    CROSS_REPLICA_AND_PARTITION = "cross_replica_and_partition"
    FLATTENED_ID = "flattened_id"


def group_mode(channel_id: int | None, use_global_device_ids: bool | None) -> GroupMode:
    """The mode of a collective; ``use_global_device_ids`` is None for ops
    that have no such attribute (all_to_all, collective_permute/broadcast)."""
    if channel_id is None:
        return GroupMode.CROSS_REPLICA
    if use_global_device_ids is None:
        return GroupMode.CROSS_PARTITION
    return GroupMode.FLATTENED_ID if use_global_device_ids else \
        GroupMode.CROSS_REPLICA_AND_PARTITION


def process_groups(op: str, grid: ProcessGrid, mode: GroupMode,
                   replica_groups: tuple[tuple[int, ...], ...]) -> list[list[int]]:
    """The groups of flat process indices that ``replica_groups`` name in ``mode``."""
    R, P = grid.num_replicas, grid.num_partitions
    id_space = {GroupMode.CROSS_REPLICA: R, GroupMode.CROSS_PARTITION: P,
                GroupMode.CROSS_REPLICA_AND_PARTITION: R, GroupMode.FLATTENED_ID: R * P}[mode]
    if not replica_groups:
        if mode is GroupMode.FLATTENED_ID:
            raise ValueError(f"{op}: use_global_device_ids needs explicit replica_groups")
        replica_groups = (tuple(range(id_space)),)
    for group in replica_groups:
        for i in group:
            if i >= id_space:
                raise ValueError(
                    f"{op}: replica_groups {replica_groups} name id {i}, but a {mode.value} "
                    f"collective of a program with {R} replica(s) and {P} partition(s) has "
                    f"ids 0..{id_space - 1} (run several processes with run_replicated)")
    if mode is GroupMode.CROSS_REPLICA:
        return [[grid.index(r, p) for r in g] for p in range(P) for g in replica_groups]
    if mode is GroupMode.CROSS_PARTITION:
        return [[grid.index(r, p) for p in g] for r in range(R) for g in replica_groups]
    if mode is GroupMode.CROSS_REPLICA_AND_PARTITION:
        return [[grid.index(r, p) for p in range(P) for r in g] for g in replica_groups]
    return [list(g) for g in replica_groups]


def _group_of_every_process(op: str, grid: ProcessGrid, groups: list[list[int]]) -> None:
    covered = {i for g in groups for i in g}
    missing = [grid.ids(i) for i in range(grid.size) if i not in covered]
    if missing:
        raise ValueError(f"{op}: process (replica, partition) {missing[0]} belongs to no "
                         f"group of replica_groups")


# --------------------------------------------------------------------------
# parameters and shape-rule checks
# --------------------------------------------------------------------------

def _replica_groups(op: str, groups: Any) -> tuple[tuple[int, ...], ...]:
    """``replica_groups`` as a tuple of tuples of distinct non-negative ids."""
    if groups is None:
        return ()
    try:
        out = tuple(tuple(int(i) for i in g) for g in groups)
    except TypeError:
        raise ShapeError(op, f"replica_groups must be a sequence of sequences of ids, "
                             f"got {groups!r}") from None
    seen: set[int] = set()
    for g in out:
        if not g:
            raise ShapeError(op, f"replica_groups {out} contains an empty group")
        for i in g:
            if i < 0:
                raise ShapeError(op, f"replica_groups {out} contains the negative id {i}")
            if i in seen:
                raise ShapeError(op, f"replica_groups {out} name id {i} more than once")
            seen.add(i)
    return out


def _check_channel(op: str, channel_id: int | None, use_global_device_ids: bool | None,
                   *avals: AbstractValue) -> None:
    if channel_id is not None and (not isinstance(channel_id, int) or channel_id <= 0):
        raise ShapeError(op, f"channel_id must be a positive integer or None, got "
                             f"{channel_id!r}", *avals)
    if use_global_device_ids and channel_id is None:
        raise ShapeError(op, "use_global_device_ids requires a channel_id", *avals)


def _check_group_sizes(op: str, name: str, count: int, groups: tuple[tuple[int, ...], ...],
                       mode: GroupMode, *avals: AbstractValue) -> None:
    """Replica groups of one size, which is ``count`` (in CROSS_REPLICA_AND_PARTITION
    mode a group spans every partition: ``count`` is a multiple of its size)."""
    if count < 1:
        raise ShapeError(op, f"{name} must be at least 1, got {count}", *avals)
    spans_partitions = mode is GroupMode.CROSS_REPLICA_AND_PARTITION
    for g in groups:
        if len(g) != len(groups[0]) or (count % len(g) if spans_partitions else count != len(g)):
            need = (f"a number of members dividing {name} = {count}" if spans_partitions
                    else f"{name} = {count} members")
            raise ShapeError(op, f"every replica group must have {need}, got {g} in "
                                 f"replica_groups {groups}", *avals)


def _check_dim(op: str, name: str, dim: int, aval: AbstractValue) -> None:
    if not 0 <= dim < aval.ndim:
        raise ShapeError(op, f"{name} {dim} is out of range for rank {aval.ndim}", aval)


def _with_dim(aval: AbstractValue, dim: int, size: int) -> AbstractValue:
    dims = list(aval.dimensions)
    dims[dim] = size
    return array_value(aval.element_type, dims, aval.weak_type)


def _check_operands(op: str, avals: Sequence[AbstractValue]) -> None:
    if not avals:
        raise ShapeError(op, "needs at least one operand")
    for a in avals:
        if not a.shape.is_array:
            raise ShapeError(op, f"operands must be arrays, got {a.shape}", *avals)


def _check_reducers(op: str, computation: tuple[Graph, ...], avals: Sequence[AbstractValue]
                    ) -> None:
    if len(computation) != len(avals):
        raise ShapeError(op, f"needs one computation per operand, got {len(computation)} "
                             f"for {len(avals)} operands", *avals)
    for graph, a in zip(computation, avals):
        scalar = array_value(a.element_type, ())
        ins = [v.strip_layout().strong() for v in graph.in_avals]
        outs = [v.strip_layout().strong() for v in graph.out_avals]
        if ins != [scalar, scalar] or outs != [scalar]:
            raise ShapeError(op, f"the computation must map two {scalar.shape} scalars to one, "
                                 f"got ({', '.join(str(v.shape) for v in ins)}) -> "
                                 f"({', '.join(str(v.shape) for v in outs)})", *avals)


# --------------------------------------------------------------------------
# applying a reduction computation to whole arrays
# --------------------------------------------------------------------------

_ELEMENTWISE_NAMES = frozenset(BINARY_PRIMITIVES) | frozenset(UNARY_PRIMITIVES) | {
    "compare", "select", "convert_element_type"}


def _typed(x: np.ndarray, aval: AbstractValue) -> Any:
    """A raw array as an eager value of ``aval``'s type (bf16 words marked as such)."""
    return bf16_array(x) if aval.element_type is PT.BF16 else x


def _combine(graph: Graph, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """``graph(lhs, rhs)`` for every element of two equally-shaped arrays.

    A computation made only of element-wise ops on its parameters (``add``,
    ``max``...) runs once on the whole arrays; anything else runs per element.
    """
    aval = graph.in_avals[0]
    with set_interpreter(EvalInterpreter()):
        if not graph.const_vars and all(
                eq.primitive.name in _ELEMENTWISE_NAMES and
                not any(isinstance(a, Literal) for a in eq.inputs) for eq in graph.equations):
            (out,) = eval_graph(graph, _typed(lhs, aval), _typed(rhs, aval))
            return np.asarray(out)
        out = np.empty_like(lhs)
        for idx in np.ndindex(lhs.shape):
            # 0-d arrays keep their type (a np.float64 scalar would pass for a Python float)
            (value,) = eval_graph(graph, _typed(np.asarray(lhs[idx]), aval),
                                  _typed(np.asarray(rhs[idx]), aval))
            out[idx] = np.asarray(value)
        return out


# --------------------------------------------------------------------------
# semantics over the processes
# --------------------------------------------------------------------------

Operands = tuple[np.ndarray, ...]
# primitive -> fn(grid, [operands of each process], **params) -> [results of each process]
COLLECTIVE_SEMANTICS: dict[Primitive, Callable[..., list[Operands]]] = {}


def _groups_for(op: str, grid: ProcessGrid, replica_groups, channel_id, use_global_device_ids,
                *, every_process: bool = True) -> list[list[int]]:
    groups = process_groups(op, grid, group_mode(channel_id, use_global_device_ids),
                            replica_groups)
    if every_process:
        _group_of_every_process(op, grid, groups)
    return groups


def _reduce_group(computation: tuple[Graph, ...], members: list[Operands]) -> list[np.ndarray]:
    """Each operand reduced over the group's members, in group order."""
    out = []
    for i, graph in enumerate(computation):
        acc = members[0][i]
        for m in members[1:]:
            acc = _combine(graph, acc, m[i])
        out.append(acc)
    return out


def _all_reduce_semantics(grid, operands, *, computation, replica_groups, channel_id,
                          use_global_device_ids):
    results: list[Operands] = [()] * grid.size
    for g in _groups_for("all_reduce", grid, replica_groups, channel_id, use_global_device_ids):
        reduced = tuple(_reduce_group(computation, [operands[m] for m in g]))
        for m in g:
            results[m] = reduced
    return results


def _shard_count_matches(op: str, name: str, count: int, group: list[int], grid) -> None:
    if len(group) != count:
        raise ValueError(f"{op}: {name} {count} does not match the {len(group)} processes "
                         f"{[grid.ids(m) for m in group]} of its group")


def _all_gather_semantics(grid, operands, *, all_gather_dimension, shard_count, replica_groups,
                          channel_id, use_global_device_ids):
    results: list[Operands] = [()] * grid.size
    for g in _groups_for("all_gather", grid, replica_groups, channel_id, use_global_device_ids):
        _shard_count_matches("all_gather", "shard_count", shard_count, g, grid)
        gathered = tuple(np.concatenate([operands[m][i] for m in g], axis=all_gather_dimension)
                         for i in range(len(operands[g[0]])))
        for m in g:
            results[m] = gathered
    return results


def _all_to_all_semantics(grid, operands, *, split_dimension, concat_dimension, split_count,
                          replica_groups, channel_id):
    results: list[Operands] = [()] * grid.size
    for g in _groups_for("all_to_all", grid, replica_groups, channel_id, None):
        _shard_count_matches("all_to_all", "split_count", split_count, g, grid)
        # blocks[sender][operand][j] goes to the j-th member of the group
        blocks = [[np.split(x, split_count, axis=split_dimension) for x in operands[m]]
                  for m in g]
        for j, receiver in enumerate(g):
            results[receiver] = tuple(
                np.concatenate([blocks[s][i][j] for s in range(len(g))], axis=concat_dimension)
                for i in range(len(operands[receiver])))
    return results


def _reduce_scatter_semantics(grid, operands, *, computation, scatter_dimension, shard_count,
                              replica_groups, channel_id, use_global_device_ids):
    results: list[Operands] = [()] * grid.size
    for g in _groups_for("reduce_scatter", grid, replica_groups, channel_id,
                         use_global_device_ids):
        _shard_count_matches("reduce_scatter", "shard_count", shard_count, g, grid)
        reduced = _reduce_group(computation, [operands[m] for m in g])
        shards = [np.split(r, shard_count, axis=scatter_dimension) for r in reduced]
        for j, m in enumerate(g):
            results[m] = tuple(s[j] for s in shards)
    return results


def _collective_permute_semantics(grid, operands, *, source_target_pairs, channel_id):
    mode = group_mode(channel_id, None)
    cross_replica = mode is GroupMode.CROSS_REPLICA
    id_space = grid.num_replicas if cross_replica else grid.num_partitions
    if any(i >= id_space for pair in source_target_pairs for i in pair):
        kind = "replicas" if cross_replica else "partitions"
        raise ValueError(f"collective_permute: source_target_pairs {source_target_pairs} name "
                         f"an id beyond the {id_space} {kind} of the program (run several "
                         f"processes with run_replicated)")
    results = [tuple(np.zeros_like(x) for x in ops) for ops in operands]
    for outer in range(grid.num_partitions if cross_replica else grid.num_replicas):
        for source, target in source_target_pairs:
            ids = ((source, outer), (target, outer)) if cross_replica \
                else ((outer, source), (outer, target))
            results[grid.index(*ids[1])] = operands[grid.index(*ids[0])]
    return results


def _collective_broadcast_semantics(grid, operands, *, replica_groups, channel_id):
    results = [tuple(np.zeros_like(x) for x in ops) for ops in operands]
    for g in _groups_for("collective_broadcast", grid, replica_groups, channel_id, None,
                         every_process=False):
        for m in g:
            results[m] = operands[g[0]]
    return results


def _replica_id_semantics(grid, operands):
    return [(np.uint32(grid.ids(i)[0]),) for i in range(grid.size)]


def _partition_id_semantics(grid, operands):
    return [(np.uint32(grid.ids(i)[1]),) for i in range(grid.size)]


# --------------------------------------------------------------------------
# eager calls: one process of a lockstep run, or a program of one process
# --------------------------------------------------------------------------

class _ProcessState(threading.local):
    def __init__(self):
        self.current: tuple[ProcessGrid, int] | None = None


_process = _ProcessState()
_SINGLE = ProcessGrid(1, 1)


@contextlib.contextmanager
def _as_process(grid: ProcessGrid, index: int) -> Iterator[None]:
    previous = _process.current
    _process.current = (grid, index)
    try:
        yield
    finally:
        _process.current = previous


def _define(name: str, semantics: Callable[..., list[Operands]], *, multiple_results: bool,
            local: bool = False) -> Primitive:
    """A collective primitive whose eager impl runs ``semantics``.

    Outside ``run_replicated`` the program has one process.  Inside it, a
    collective met while one process evaluates an equation on its own (a
    collective inside a loop body or branch) can only be answered if it
    needs no other process (``local``: replica_id, partition_id).
    """
    prim = Primitive(name, multiple_results=multiple_results)
    COLLECTIVE_SEMANTICS[prim] = semantics

    def impl(*operands, **params):
        grid, index = _process.current or (_SINGLE, 0)
        if grid.size > 1 and not local:
            raise NotImplementedError(
                f"{name}: a collective inside a sub-computation (loop body, branch, call) "
                f"is not supported by run_replicated's lockstep interpreter yet")
        if local:
            out = semantics(grid, [operands] * grid.size, **params)[index]
        else:
            out = semantics(_SINGLE, [operands], **params)[0]
        return out if multiple_results else out[0]

    prim.def_impl(impl)
    return prim


all_reduce_p = _define("all_reduce", _all_reduce_semantics, multiple_results=True)
all_gather_p = _define("all_gather", _all_gather_semantics, multiple_results=True)
all_to_all_p = _define("all_to_all", _all_to_all_semantics, multiple_results=True)
reduce_scatter_p = _define("reduce_scatter", _reduce_scatter_semantics, multiple_results=True)
collective_permute_p = _define("collective_permute", _collective_permute_semantics,
                               multiple_results=False)
collective_broadcast_p = _define("collective_broadcast", _collective_broadcast_semantics,
                                 multiple_results=False)
replica_id_p = _define("replica_id", _replica_id_semantics, multiple_results=False, local=True)
partition_id_p = _define("partition_id", _partition_id_semantics, multiple_results=False,
                         local=True)


# --------------------------------------------------------------------------
# shape rules
# --------------------------------------------------------------------------

@all_reduce_p.def_abstract_eval
def _all_reduce_rule(*avals, computation, replica_groups, channel_id, use_global_device_ids):
    _check_operands("all_reduce", avals)
    _check_channel("all_reduce", channel_id, use_global_device_ids, *avals)
    _check_reducers("all_reduce", computation, avals)
    return list(avals)


@all_gather_p.def_abstract_eval
def _all_gather_rule(*avals, all_gather_dimension, shard_count, replica_groups, channel_id,
                     use_global_device_ids):
    op = "all_gather"
    _check_operands(op, avals)
    _check_channel(op, channel_id, use_global_device_ids, *avals)
    _check_group_sizes(op, "shard_count", shard_count, replica_groups,
                       group_mode(channel_id, use_global_device_ids), *avals)
    for a in avals:
        _check_dim(op, "all_gather_dimension", all_gather_dimension, a)
    return [_with_dim(a, all_gather_dimension, a.dimensions[all_gather_dimension] * shard_count)
            for a in avals]


@all_to_all_p.def_abstract_eval
def _all_to_all_rule(*avals, split_dimension, concat_dimension, split_count, replica_groups,
                     channel_id):
    op = "all_to_all"
    _check_operands(op, avals)
    _check_channel(op, channel_id, None, *avals)
    _check_group_sizes(op, "split_count", split_count, replica_groups,
                       group_mode(channel_id, None), *avals)
    out = []
    for a in avals:
        _check_dim(op, "split_dimension", split_dimension, a)
        _check_dim(op, "concat_dimension", concat_dimension, a)
        if a.dimensions[split_dimension] % split_count:
            raise ShapeError(op, f"split_count {split_count} does not divide dimension "
                                 f"{split_dimension} of size {a.dimensions[split_dimension]} "
                                 f"(split_dimension)", a)
        a = _with_dim(a, split_dimension, a.dimensions[split_dimension] // split_count)
        out.append(_with_dim(a, concat_dimension, a.dimensions[concat_dimension] * split_count))
    return out


@reduce_scatter_p.def_abstract_eval
def _reduce_scatter_rule(*avals, computation, scatter_dimension, shard_count, replica_groups,
                         channel_id, use_global_device_ids):
    op = "reduce_scatter"
    _check_operands(op, avals)
    _check_channel(op, channel_id, use_global_device_ids, *avals)
    _check_reducers(op, computation, avals)
    _check_group_sizes(op, "shard_count", shard_count, replica_groups,
                       group_mode(channel_id, use_global_device_ids), *avals)
    out = []
    for a in avals:
        _check_dim(op, "scatter_dimension", scatter_dimension, a)
        if a.dimensions[scatter_dimension] % shard_count:
            raise ShapeError(op, f"shard_count {shard_count} does not divide dimension "
                                 f"{scatter_dimension} of size {a.dimensions[scatter_dimension]} "
                                 f"(scatter_dimension)", a)
        out.append(_with_dim(a, scatter_dimension, a.dimensions[scatter_dimension] // shard_count))
    return out


@collective_permute_p.def_abstract_eval
def _collective_permute_rule(x, *, source_target_pairs, channel_id):
    op = "collective_permute"
    _check_operands(op, (x,))
    _check_channel(op, channel_id, None, x)
    for k, name in ((0, "source"), (1, "target")):
        ids = [pair[k] for pair in source_target_pairs]
        if any(i < 0 for i in ids):
            raise ShapeError(op, f"source_target_pairs {source_target_pairs} contain a "
                                 f"negative id", x)
        if len(set(ids)) != len(ids):
            raise ShapeError(op, f"source_target_pairs {source_target_pairs} repeat a {name} "
                                 f"(each process sends and receives at most once)", x)
    return x


@collective_broadcast_p.def_abstract_eval
def _collective_broadcast_rule(x, *, replica_groups, channel_id):
    _check_operands("collective_broadcast", (x,))
    _check_channel("collective_broadcast", channel_id, None, x)
    return x


@replica_id_p.def_abstract_eval
def _replica_id_rule():
    return array_value(PT.U32, ())


@partition_id_p.def_abstract_eval
def _partition_id_rule():
    return array_value(PT.U32, ())


# --------------------------------------------------------------------------
# user functions
# --------------------------------------------------------------------------

def _operand_list(operand: Any) -> tuple[list[Any], bool]:
    """An operand or a sequence of operands (XLA's tuple form); whether it was one."""
    if isinstance(operand, (tuple, list)):
        return list(operand), False
    return [operand], True


def _results(outs: Sequence[Any], single: bool) -> Any:
    return outs[0] if single else tuple(outs)


def _channel(channel_id: Any) -> int | None:
    return None if channel_id is None else int(channel_id)


def _reducers(op: str, computation: Callable[..., Any], operands: Sequence[Any]
              ) -> tuple[Graph, ...]:
    """``computation`` traced once per element type of the operands."""
    traced: dict[PT, Graph] = {}
    for x in operands:
        t = abstractify(x).element_type
        if t not in traced:
            (scalar,) = scalar_avals([abstractify(x)])
            traced[t] = trace_computation(computation, [scalar, scalar], name=f"{op}_computation",
                                          allow_captures=False, op=op).graph
    return tuple(traced[abstractify(x).element_type] for x in operands)


def _dimension(op: str, name: str, dim: int, operands: Sequence[Any]) -> int:
    rank = abstractify(operands[0]).ndim if operands else 0
    return canonical_dims(op, name, (int(dim),), rank, *map(abstractify, operands))[0]


def all_reduce(operand: Any, computation: Callable[..., Any], replica_groups=None,
               channel_id: int | None = None, use_global_device_ids: bool = False) -> Any:
    """XLA's AllReduce: ``computation`` (e.g. ``lax.add``) folded over the operands
    of every process group; every member gets the result.  ``operand`` may be a
    sequence of arrays (the tuple form), reduced each on its own."""
    operands, single = _operand_list(operand)
    outs = all_reduce_p.bind(
        *operands, computation=_reducers("all_reduce", computation, operands),
        replica_groups=_replica_groups("all_reduce", replica_groups),
        channel_id=_channel(channel_id), use_global_device_ids=bool(use_global_device_ids))
    return _results(outs, single)


def cross_replica_sum(operand: Any, replica_groups=None) -> Any:
    """XLA's CrossReplicaSum: AllReduce with a summation computation."""
    return all_reduce(operand, add, replica_groups)


def all_gather(operand: Any, all_gather_dimension: int | str, shard_count: int | None = None,
               replica_groups=None, channel_id: int | None = None,
               use_global_device_ids: bool = False, *, axis: int = 0,
               tiled: bool = False) -> Any:
    """XLA's AllGather: the operands of a group concatenated along
    ``all_gather_dimension`` in group order.  ``shard_count`` (the number of
    processes of a group) defaults to the size of the replica groups.

    JAX's spelling: ``all_gather(x, axis_name, axis=0, tiled=False)`` with a
    pmap axis name stacks every replica's ``x`` along a new dimension
    ``axis`` (concatenates along ``axis`` with ``tiled``)."""
    if isinstance(all_gather_dimension, str):
        out = _named("all_gather", operand, all_gather_dimension, axis=axis, tiled=tiled)
        if out is not NotImplemented:
            return out
        n = _axis_size("all_gather", all_gather_dimension)

        def gather(leaf):
            at = axis % (abstractify(leaf).ndim + (0 if tiled else 1))
            return all_gather(leaf if tiled else expand_dims(leaf, (at,)), at, shard_count=n)
        return pytree.tree_map(gather, operand)
    operands, single = _operand_list(operand)
    groups = _replica_groups("all_gather", replica_groups)
    if shard_count is None:
        if not groups or group_mode(_channel(channel_id), bool(use_global_device_ids)) is \
                GroupMode.CROSS_REPLICA_AND_PARTITION:
            raise ShapeError("all_gather", f"shard_count is required with replica_groups "
                                           f"{groups} and channel_id {channel_id}")
        shard_count = len(groups[0])
    outs = all_gather_p.bind(
        *operands,
        all_gather_dimension=_dimension("all_gather", "all_gather_dimension",
                                        all_gather_dimension, operands),
        shard_count=int(shard_count), replica_groups=groups, channel_id=_channel(channel_id),
        use_global_device_ids=bool(use_global_device_ids))
    return _results(outs, single)


def all_to_all(operand: Any, split_dimension: int | str, concat_dimension: int,
               split_count: int, replica_groups=None, channel_id: int | None = None, *,
               tiled: bool = False) -> Any:
    """XLA's AllToAll: each process splits its operand into ``split_count``
    blocks along ``split_dimension`` and sends block ``i`` to the ``i``-th
    member of its group, which concatenates what it receives along
    ``concat_dimension`` in group order.

    JAX's spelling: ``all_to_all(x, axis_name, split_axis, concat_axis,
    tiled=False)`` with a pmap axis name of ``n`` replicas: dimension
    ``split_axis`` (of size ``n``) is scattered, slice ``j`` going to replica
    ``j``, and what a replica receives is stacked along a new dimension
    ``concat_axis`` (of the result, which lacks ``split_axis``).  With
    ``tiled``, XLA's AllToAll over the replicas: ``split_axis`` is split into
    ``n`` blocks and the received blocks are concatenated along ``concat_axis``."""
    if isinstance(split_dimension, str):
        return _all_to_all_by_axis(operand, split_dimension, concat_dimension, split_count, tiled)
    operands, single = _operand_list(operand)
    outs = all_to_all_p.bind(
        *operands,
        split_dimension=_dimension("all_to_all", "split_dimension", split_dimension, operands),
        concat_dimension=_dimension("all_to_all", "concat_dimension", concat_dimension,
                                    operands),
        split_count=int(split_count), replica_groups=_replica_groups("all_to_all", replica_groups),
        channel_id=_channel(channel_id))
    return _results(outs, single)


def _all_to_all_by_axis(x: Any, axis_name: str, split_axis: int, concat_axis: int,
                        tiled: bool) -> Any:
    n = _axis_size("all_to_all", axis_name)

    def exchange(leaf: Any) -> Any:
        aval = abstractify(leaf)
        split, concat = (canonical_dims("all_to_all", what, (d,), aval.ndim)[0]
                         for what, d in (("split_axis", split_axis), ("concat_axis", concat_axis)))
        size = aval.dimensions[split]
        if tiled:
            if size % n:
                raise ShapeError("all_to_all", f"split_axis {split_axis} of shape {aval.shape} "
                                               f"has size {size}, not a multiple of the {n} "
                                               f"replicas of {axis_name!r}")
            return all_to_all(leaf, split, concat, n)
        if size != n:
            raise ShapeError("all_to_all", f"split_axis {split_axis} of shape {aval.shape} has "
                                           f"size {size}, not the {n} replicas of "
                                           f"{axis_name!r} (or pass tiled=True)")
        # the new dimension goes in as a size-1 one, XLA's AllToAll fills it,
        # and the split dimension (now of size 1) goes
        if split == concat:
            return all_to_all(leaf, split, split, n)
        if split < concat:
            out = all_to_all(expand_dims(leaf, (concat + 1,)), split, concat + 1, n)
        else:
            out = all_to_all(expand_dims(leaf, (concat,)), split + 1, concat, n)
            split += 1
        return squeeze(out, (split,))
    return pytree.tree_map(exchange, x)


def reduce_scatter(operand: Any, computation: Callable[..., Any], scatter_dimension: int,
                   shard_count: int, replica_groups=None, channel_id: int | None = None,
                   use_global_device_ids: bool = False) -> Any:
    """XLA's ReduceScatter: an AllReduce whose result is split into
    ``shard_count`` blocks along ``scatter_dimension``; the ``i``-th member of
    a group gets block ``i``."""
    operands, single = _operand_list(operand)
    outs = reduce_scatter_p.bind(
        *operands, computation=_reducers("reduce_scatter", computation, operands),
        scatter_dimension=_dimension("reduce_scatter", "scatter_dimension", scatter_dimension,
                                     operands),
        shard_count=int(shard_count),
        replica_groups=_replica_groups("reduce_scatter", replica_groups),
        channel_id=_channel(channel_id), use_global_device_ids=bool(use_global_device_ids))
    return _results(outs, single)


def collective_permute(operand: Any, source_target_pairs: Sequence[Sequence[int]],
                       channel_id: int | None = None) -> Any:
    """XLA's CollectivePermute: for each ``(source, target)`` pair the operand of
    ``source`` becomes the result of ``target``; processes that are no target
    get zeros.  Ids are replicas (partitions when ``channel_id`` is set)."""
    try:
        pairs = tuple((int(s), int(t)) for s, t in source_target_pairs)
    except (TypeError, ValueError):
        raise ShapeError("collective_permute", f"source_target_pairs must be (source, target) "
                                               f"pairs, got {source_target_pairs!r}") from None
    return collective_permute_p.bind(operand, source_target_pairs=pairs,
                                     channel_id=_channel(channel_id))


def collective_broadcast(operand: Any, replica_groups=None, channel_id: int | None = None) -> Any:
    """CollectiveBroadcast: every member of a group gets the operand of the
    group's first member; processes in no group get zeros."""
    return collective_broadcast_p.bind(
        operand, replica_groups=_replica_groups("collective_broadcast", replica_groups),
        channel_id=_channel(channel_id))


def replica_id() -> Any:
    """XLA's ReplicaId: this process's replica number, a ``u32`` scalar in [0, N)."""
    return replica_id_p.bind()


def partition_id() -> Any:
    """PartitionId: this process's partition number, a ``u32`` scalar."""
    return partition_id_p.bind()


# --------------------------------------------------------------------------
# JAX's spellings by axis name (bound by compile.pmap while it traces)
# --------------------------------------------------------------------------

class _AxisEnv(threading.local):
    def __init__(self):
        self.names: dict[str, int] = {}


_axis_env = _AxisEnv()


@contextlib.contextmanager
def axis_name_bound(name: str | None, size: int) -> Iterator[None]:
    """Bind ``name`` to the replica axis of ``size`` processes while a
    function is traced for an SPMD run (``compile.pmap`` does this)."""
    previous = dict(_axis_env.names)
    if name is not None:
        _axis_env.names[name] = int(size)
    try:
        yield
    finally:
        _axis_env.names = previous


def _axis_size(op: str, axis_name: str) -> int:
    size = _axis_env.names.get(axis_name)
    if size is None:
        bound = ", ".join(map(repr, _axis_env.names)) or "none"
        raise NameError(f"{op}: unbound axis name {axis_name!r} (bound by pmap's axis_name: "
                        f"{bound})")
    return size


def _named(op: str, x: Any, axis_name: Any, **params: Any) -> Any:
    """The collective over a ``vmap`` axis named ``axis_name``, or NotImplemented
    (autodiff builds on this package: imported when called)."""
    from numxla.autodiff.named_axes import named_collective
    return named_collective(op, x, axis_name, **params)


def _over_axis(op: str, computation: Callable[..., Any]) -> Callable[[Any, str], Any]:
    def fn(x: Any, axis_name: str, *, axis_index_groups: Any = None) -> Any:
        out = _named(op, x, axis_name)
        if out is not NotImplemented:
            return out
        _axis_size(op, axis_name)
        leaves, tree = pytree.flatten(x)
        if not leaves:
            return x
        return tree.unflatten(list(all_reduce(list(leaves), computation)))
    fn.__name__ = op
    fn.__doc__ = (f"JAX's ``{op}``: an AllReduce with ``{computation.__name__}`` over every "
                  f"replica of the pmap axis ``axis_name``; the leaves of a pytree go in one "
                  f"AllReduce (XLA's tuple form: one exchange for all of them).")
    return fn


psum = _over_axis("psum", add)
pmax = _over_axis("pmax", lax_max)
pmin = _over_axis("pmin", lax_min)


def pmean(x: Any, axis_name: str, *, axis_index_groups: Any = None) -> Any:
    """JAX's ``pmean``: ``psum`` divided by the number of replicas."""
    out = _named("pmean", x, axis_name)
    if out is not NotImplemented:
        return out
    n = _axis_size("pmean", axis_name)
    return pytree.tree_map(lambda leaf: div(leaf, n), psum(x, axis_name))


def ppermute(x: Any, axis_name: str, perm: Sequence[Sequence[int]]) -> Any:
    """JAX's ``ppermute``: a CollectivePermute by ``(source, target)`` replica pairs."""
    out = _named("ppermute", x, axis_name, perm=perm)
    if out is not NotImplemented:
        return out
    _axis_size("ppermute", axis_name)
    return pytree.tree_map(lambda leaf: collective_permute(leaf, perm), x)


def axis_index(axis_name: str) -> Any:
    """JAX's ``axis_index``: this replica's index along the pmap axis (``s32``)."""
    out = _named("axis_index", None, axis_name)
    if out is not NotImplemented:
        return out
    _axis_size("axis_index", axis_name)
    return convert_element_type(replica_id(), PT.S32)


# --------------------------------------------------------------------------
# running a program on several processes
# --------------------------------------------------------------------------

def run_replicated(fn: Callable[..., Any], per_process_args: Sequence[Any] | None = None,
                   num_replicas: int | None = None, num_partitions: int = 1) -> list[Any]:
    """Run ``fn`` as an SPMD program of ``num_replicas x num_partitions`` processes.

    ``per_process_args[i]`` holds the positional arguments of process ``i``
    (replica ``i // num_partitions``, partition ``i % num_partitions``): a
    tuple, or a single argument that is not a tuple.  Every process must pass
    arguments of the same structure and types.  ``fn`` is traced once and its
    graph interpreted over all processes in lockstep; returns ``fn``'s result
    on each process, in process order.
    """
    if not isinstance(current_interpreter(), EvalInterpreter):
        raise TypeError("run_replicated runs concrete programs: call it outside of "
                        "make_graph/jit/transforms")
    if per_process_args is None:
        if num_replicas is None:
            raise TypeError("run_replicated needs per_process_args or num_replicas")
        per_process_args = [()] * (num_replicas * num_partitions)
    if num_replicas is None:
        num_replicas = len(per_process_args) // num_partitions
    grid = ProcessGrid(int(num_replicas), int(num_partitions))
    if len(per_process_args) != grid.size or grid.size < 1:
        raise ValueError(f"run_replicated: {len(per_process_args)} argument lists for "
                         f"{num_replicas} replica(s) x {num_partitions} partition(s)")
    args = [a if isinstance(a, tuple) else (a,) for a in per_process_args]
    graph, signature = trace_pytree(fn, args[0], name=getattr(fn, "__name__", "spmd"))
    flat_args = []
    for i, a in enumerate(args):
        leaves, tree = pytree.flatten((a, {}))
        types = tuple((v.element_type, v.dimensions) for v in map(abstractify, leaves))
        if tree != signature.in_tree or types != tuple(
                (v.element_type, v.dimensions) for v in signature.in_avals):
            raise TypeError(f"run_replicated: process {grid.ids(i)} passes arguments of another "
                            f"structure or type than process (0, 0)")
        flat_args.append(leaves)
    outs = _run_lockstep(graph, grid, flat_args)
    return [graph.out_tree.unflatten(o) for o in outs]


def _concrete(value: Any, aval: AbstractValue) -> Any:
    return _typed(np.asarray(value).astype(aval.dtype, copy=False), aval)


def _run_lockstep(graph: Graph, grid: ProcessGrid, flat_args: list[list[Any]]) -> list[list[Any]]:
    """Interpret ``graph`` on every process at once: a collective equation gets
    the operands of all processes; any other equation runs on each process."""
    envs = [dict(zip(graph.const_vars, graph.const_values)) | dict(zip(graph.in_vars, a))
            for a in flat_args]

    def read(env, atom):
        return atom.value if isinstance(atom, Literal) else env[atom]

    mailboxes: dict[tuple[int, int, int], se.HostQueue] = {}
    for eq in graph.equations:
        ins = [[read(env, a) for a in eq.inputs] for env in envs]
        semantics = COLLECTIVE_SEMANTICS.get(eq.primitive)
        if eq.primitive in (se.send_p, se.recv_p) and \
                eq.params["source_target_pairs"] is not None:
            outs = _point_to_point(eq, grid, ins, mailboxes)
        elif semantics is not None:
            raw = [tuple(to_numpy(v, a.aval) for v, a in zip(vals, eq.inputs)) for vals in ins]
            outs = [tuple(_concrete(o, v.aval) for o, v in zip(out, eq.outputs))
                    for out in semantics(grid, raw, **eq.params)]
        else:
            outs = []
            for index, vals in enumerate(ins):
                with _as_process(grid, index):
                    out = eq.primitive.bind(*vals, **eq.params)
                outs.append(tuple(out) if eq.primitive.multiple_results else (out,))
        for env, out in zip(envs, outs):
            env.update(zip(eq.outputs, out))
    unreceived = [f"{len(q)} on channel {c} from {grid.name(s)} to {grid.name(t)}"
                  for (c, s, t), q in sorted(mailboxes.items()) if len(q)]
    if unreceived:
        raise se.HostTransferError(f"send: messages never received: {'; '.join(unreceived)}")
    return [[read(env, a) for a in graph.out_atoms] for env in envs]


def _point_to_point(eq: Any, grid: ProcessGrid, ins: list[list[Any]],
                    mailboxes: dict[tuple[int, int, int], se.HostQueue]) -> list[tuple]:
    """Send/Recv with ``source_target_pairs`` on every process at once: a send
    queues each source's operand for its target, per channel; a recv takes
    the next value queued for it (processes that are no target get zeros)."""
    p = eq.params
    pairs, channel = p["source_target_pairs"], p["channel_id"]
    se.check_pair_ids(eq.primitive.name, pairs, channel, grid.size)

    def box(source: int, target: int) -> se.HostQueue:
        key = (channel, source, target)
        if key not in mailboxes:
            mailboxes[key] = se.HostQueue(f"channel {channel} from {grid.name(source)} to "
                                          f"{grid.name(target)}")
        return mailboxes[key]

    if eq.primitive is se.send_p:
        for source, target in pairs:
            box(source, target).put(ins[source][0])
        return [(se.Token(),)] * grid.size
    source_of = {t: s for s, t in pairs}
    outs = []
    for index in range(grid.size):
        if index not in source_of:
            outs.append((se.zeros_value(p["shape"]), se.Token()))
            continue
        queue = box(source_of[index], index)
        outs.append((se._take("recv", queue, p["shape"]), se.Token()))
    return outs
