"""Clustering: a graph's equations grouped into the kernels of a program.

After fusion, every equation that materialises its results (a *root*)
becomes one kernel together with the fused equations its loops compute
(XLA's fusion computations): a :class:`Cluster`.  A cluster is a graph of
its own whose parameters are the values it reads from memory — the
program's parameters, constants and other clusters' results, in the order
of first use — so two clusters of the same ops, types, shapes and layouts
have the same generated code wherever they occur: in every layer of a deep
model, in another model, in another process (the disk cache is keyed by
that code).  Runs of clusters with small results share a kernel.  A root that is a
bitcast (:data:`compile.registry.bitcasts`:
a row-major reshape, a transpose whose layout is its operand's physical
order) is no kernel at all: its result is its operand's buffer
(:class:`Alias`).  A root with a library kernel
(:data:`compile.registry.library_rules`: batch norms in dense layouts...)
is a :class:`Call` of that pre-compiled kernel, with nothing fused into it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from numxla.primitives import dot_conv
from numxla.tracer.graph import Equation, Graph, Var

from .fusion import fusion_roots
from .registry import LibraryCalls, bitcasts, library_call

__all__ = ["Cluster", "Alias", "Call", "form_clusters", "clusterable"]


@dataclass(frozen=True, eq=False)
class Cluster:
    """One kernel: ``graph``'s parameters are the values it reads, its
    results the values it materialises for later steps; ``roots`` are the
    equations that materialise them (one, or a run of small ones)."""
    graph: Graph
    roots: tuple[Equation, ...]

    @property
    def inputs(self) -> tuple[Var, ...]:
        return self.graph.in_vars

    @property
    def outputs(self) -> tuple[Var, ...]:
        return self.graph.out_atoms


@dataclass(frozen=True, eq=False)
class Alias:
    """``output`` is ``source``'s buffer, read with its own shape (a bitcast)."""
    output: Var
    source: Var
    root: Equation


@dataclass(frozen=True, eq=False)
class Call:
    """``root`` run by calling library kernels (no generated code)."""
    root: Equation
    calls: LibraryCalls

    @property
    def inputs(self) -> tuple[Var, ...]:
        return tuple(self.root.inputs)

    @property
    def outputs(self) -> tuple[Var, ...]:
        return tuple(self.root.outputs)


Step = Cluster | Alias | Call


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


# A run of clusters whose results all have at most this many elements (the
# scalars and short vectors of a loss, a softmax over classes, the small
# arrays of a test) is one kernel: each kernel costs a Numba compile (~50 ms)
# and a call, whatever its size.
SMALL_ELEMENTS = 1024


def form_clusters(graph: Graph, fused: dict[Var, Equation]) -> list[Step]:
    """The steps of ``graph``'s program, in graph order: a cluster per root
    equation (with the fused equations it computes) — one for a run of small
    ones —, an alias per bitcast, a call per library kernel."""
    members = fusion_roots(fused, graph.equations)
    steps: list[Step] = []
    for eq in graph.equations:
        if len(eq.outputs) == 1 and eq.outputs[0] in fused:
            continue  # computed inside its consumers' loops
        is_bitcast = bitcasts.get(eq.primitive)
        if is_bitcast is not None and is_bitcast(eq):
            steps.append(Alias(eq.outputs[0], eq.inputs[0], eq))
            continue
        call = None if members.get(eq) else library_call(eq)
        if call is not None:
            steps.append(Call(eq, call))
            continue
        equations = [*members.get(eq, ()), eq]
        steps.append(Cluster(Graph(_reads(equations), (), (), equations, eq.outputs,
                                   name=eq.primitive.name), (eq,)))
    return _merge_small_runs(graph, steps)


def _small(step: Step) -> bool:
    """A cluster whose results are small (products and convolutions stay
    kernels of their own, shared by every layer that has them)."""
    return isinstance(step, Cluster) and \
        not any(r.primitive in (dot_conv.dot_general_p, dot_conv.conv_general_dilated_p)
                for r in step.roots) and all(v.aval.size <= SMALL_ELEMENTS for v in step.outputs)


def _merge_small_runs(graph: Graph, steps: list[Step]) -> list[Step]:
    """Runs of small clusters (with the bitcasts of their results between
    them) as one cluster each, whose results are what later steps read."""
    order = {id(eq): k for k, eq in enumerate(graph.equations)}
    needed = [set() for _ in range(len(steps) + 1)]  # values read by steps[k:] or returned
    needed[-1] = {a for a in graph.out_atoms if isinstance(a, Var)}
    for k in range(len(steps) - 1, -1, -1):
        step = steps[k]
        reads = (step.source,) if isinstance(step, Alias) else step.inputs
        needed[k] = needed[k + 1] | set(reads)
    merged: list[Step] = []
    run: list[Step] = []
    produced: set[Var] = set()

    def close(end: int) -> None:
        if sum(isinstance(s, Cluster) for s in run) < 2:
            merged.extend(run)
            return
        seen: dict[int, Equation] = {}
        for s in run:
            for eq in (s.graph.equations if isinstance(s, Cluster) else (s.root,)):
                seen.setdefault(id(eq), eq)
        equations = sorted(seen.values(), key=lambda eq: order[id(eq)])
        outputs = [o for eq in equations for o in eq.outputs if o in needed[end]]
        roots = tuple(r for s in run if isinstance(s, Cluster) for r in s.roots)
        merged.append(Cluster(Graph(_reads(equations), (), (), equations, outputs,
                                    name=roots[0].primitive.name), roots))

    for k, step in enumerate(steps):
        joins = _small(step) or (isinstance(step, Alias) and run and step.source in produced)
        if not joins:
            close(k)
            run, produced = [], set()
            merged.append(step)
            continue
        run.append(step)
        produced.update(step.outputs if isinstance(step, Cluster) else (step.output,))
    close(len(steps))
    return merged


def _reads(equations: Sequence[Equation]) -> list[Var]:
    """The values ``equations`` read and do not compute, in order of first use."""
    computed = {o for eq in equations for o in eq.outputs}
    reads: dict[Var, None] = {}
    for eq in equations:
        for atom in eq.inputs:
            if isinstance(atom, Var) and atom not in computed:
                reads.setdefault(atom, None)
    return list(reads)
