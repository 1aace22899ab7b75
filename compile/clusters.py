"""Clustering: a graph's equations grouped into the kernels of a program.

After fusion, every equation that materialises its results (a *root*)
becomes one kernel together with the fused equations its loops compute
(XLA's fusion computations): a :class:`Cluster`.  A cluster is a graph of
its own whose parameters are the values it reads from memory — the
program's parameters, constants and other clusters' results, in the order
of first use — so two clusters of the same ops, types, shapes and layouts
have the same generated code wherever they occur: in every layer of a deep
model, in another model, in another process (the disk cache is keyed by
that code).  A root that is a bitcast (:data:`compile.registry.bitcasts`:
a row-major reshape, a transpose whose layout is its operand's physical
order) is no kernel at all: its result is its operand's buffer
(:class:`Alias`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from tracer.graph import Equation, Graph, Var

from .fusion import fusion_roots
from .registry import bitcasts

__all__ = ["Cluster", "Alias", "form_clusters", "clusterable"]


@dataclass(frozen=True, eq=False)
class Cluster:
    """One kernel: ``graph``'s parameters are the values it reads, its
    results the root's; ``root`` is the equation that materialises them."""
    graph: Graph
    root: Equation

    @property
    def inputs(self) -> tuple[Var, ...]:
        return self.graph.in_vars

    @property
    def outputs(self) -> tuple[Var, ...]:
        return self.root.outputs


@dataclass(frozen=True, eq=False)
class Alias:
    """``output`` is ``source``'s buffer, read with its own shape (a bitcast)."""
    output: Var
    source: Var
    root: Equation


def clusterable(graph: Graph) -> bool:
    """Whether ``graph`` can run as a program of kernels: its top-level values
    are all arrays of static shape (tokens, tuples and bounded dynamic
    dimensions keep the whole graph in one generated function)."""
    def plain(v) -> bool:
        shape = v.aval.shape
        return shape.is_array and not any(shape.dynamic_dimensions)
    values = [*graph.in_vars, *graph.const_vars, *graph.out_atoms]
    values += [v for eq in graph.equations for v in (*eq.inputs, *eq.outputs)]
    return all(plain(v) for v in values)


def form_clusters(graph: Graph, fused: dict[Var, Equation]) -> list[Cluster | Alias]:
    """The steps of ``graph``'s program, in graph order: a cluster per root
    equation (with the fused equations it computes), an alias per bitcast."""
    members = fusion_roots(fused, graph.equations)
    steps: list[Cluster | Alias] = []
    for eq in graph.equations:
        if len(eq.outputs) == 1 and eq.outputs[0] in fused:
            continue  # computed inside its consumers' loops
        is_bitcast = bitcasts.get(eq.primitive)
        if is_bitcast is not None and is_bitcast(eq):
            steps.append(Alias(eq.outputs[0], eq.inputs[0], eq))
            continue
        equations = [*members.get(eq, ()), eq]
        steps.append(Cluster(Graph(_reads(equations), (), (), equations, eq.outputs,
                                   name=eq.primitive.name), eq))
    return steps


def _reads(equations: Sequence[Equation]) -> list[Var]:
    """The values ``equations`` read and do not compute, in order of first use."""
    computed = {o for eq in equations for o in eq.outputs}
    reads: dict[Var, None] = {}
    for eq in equations:
        for atom in eq.inputs:
            if isinstance(atom, Var) and atom not in computed:
                reads.setdefault(atom, None)
    return list(reads)
