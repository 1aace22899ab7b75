"""Tracing the computations passed to ops (reduce's reducer, a loop body,
a sort comparator, a branch) into sub-graphs.

``trace_computation(fn, in_avals, name=...)`` runs ``fn`` on fresh tracers of
the given abstract values and returns a :class:`Computation`: the ``Graph``
(a hashable equation parameter) plus the outer values it closed over.  Those
captured values (tracers of an enclosing trace) become extra parameters of
the graph, after the declared ones; the op passes them as extra operands.
Constant NumPy arrays used inside stay constants of the sub-graph.

``fn`` receives and returns pytrees; ``in_tree`` gives the structure of its
arguments (flat by default) and the graph records its output structure.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from numxla.tracer import pytree
from numxla.tracer.core import AbstractValue, ShapeError, set_interpreter
from numxla.tracer.graph import Graph, GraphBuilder

__all__ = ["Computation", "trace_computation", "scalar_avals"]


@dataclass(frozen=True)
class Computation:
    graph: Graph
    captured: tuple[Any, ...]  # outer values to pass after the declared operands

    @property
    def out_avals(self) -> tuple[AbstractValue, ...]:
        return self.graph.out_avals


def trace_computation(fn: Callable[..., Any], in_avals: Sequence[AbstractValue], *,
                      name: str, in_tree: pytree.TreeDef | None = None,
                      allow_captures: bool = True, op: str | None = None) -> Computation:
    """Trace ``fn`` into a sub-graph named ``name`` (see the module docstring)."""
    builder = GraphBuilder(name=name)
    tracers = [builder.new_input(av, f"p{i}") for i, av in enumerate(in_avals)]
    args = in_tree.unflatten(tracers) if in_tree is not None else tracers
    args = args if isinstance(args, (list, tuple)) else [args]
    try:
        with set_interpreter(builder):
            out = fn(*args)
        leaves, out_tree = pytree.flatten(out)
        graph = builder.build(leaves, in_tree=in_tree, out_tree=out_tree)
    finally:
        builder.active = False
    if builder.captured and not allow_captures:
        raise ShapeError(op or name, f"the computation closes over {len(builder.captured)} "
                                     f"traced value(s) ({builder.captured[0].describe_origin()}); "
                                     f"pass them as operands instead")
    return Computation(graph, tuple(builder.captured))


def scalar_avals(avals: Sequence[AbstractValue]) -> list[AbstractValue]:
    """Rank-0 abstract values of the same element types (a reducer's arguments)."""
    from numxla.tracer.core import array_value
    return [array_value(av.element_type, ()) for av in avals]
