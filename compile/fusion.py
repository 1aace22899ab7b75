"""Loop fusion: which values are never materialised.

XLA's loop fusion, in the form our code generator makes cheap: a value
produced by an element-wise op (or a broadcast, an iota) whose every
consumer reads its operands one element at a time (element-wise loops,
reductions) gets no buffer and no loop of its own.  When a consumer reads
element ``i`` of it, :meth:`LoweringContext.read` emits the producer's
scalar code for element ``i`` right there, in the consumer's loop body; the
producer's own operands are read the same way, recursively.  A chain
``tanh(2x+1) * exp(-x)`` thus becomes one loop, and ``sum(exp(x))`` one
pass.  Since a fused value has no buffer, it has no layout either: only the
values a loop reads from memory or writes to memory have one.

Rules, per primitive, in tables of :mod:`compile.registry` filled by the kernel modules:

* :data:`fused_reads` — how to compute one element of the producer's result
  as source text, given its index (the producers that may be fused);
* :data:`fusion_consumers` — the primitives whose lowering reads its
  operands' elements only through ``ctx.read`` (the ops a producer may be
  fused into); those of :data:`rereading_consumers` may read an element
  several times (overlapping windows) and take only cheap producers.
  An equation a program runs as a library call (:func:`compile.registry.
  library_call`) reads buffers, so nothing is fused into it.

A value is fused when every consumer is a fusion consumer, it is not a
result of its graph, and either it has one use or its whole expression is
cheap (:data:`cheap_producers`: index remapping and simple arithmetic), so
that recomputing it per consumer costs less than a round trip to memory.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Collection, Sequence

from numxla.tracer.graph import Atom, Equation, Var

from .registry import (cheap_producers, fused_reads, fusion_consumers,  # noqa: F401
                       library_call, rereading_consumers)

__all__ = ["fused_reads", "fusion_consumers", "cheap_producers", "rereading_consumers",
           "plan_fusion", "fusion_roots"]

def plan_fusion(equations: Sequence[Equation], results: Sequence[Atom],
                exclude: Collection[Var] = ()) -> dict[Var, Equation]:
    """The values of ``equations`` to compute inside their consumers' loops,
    each with the equation that produces it.  ``results`` (the graph's
    outputs) and ``exclude`` are always materialised."""
    consumers: dict[Var, list[Equation]] = defaultdict(list)
    for eq in equations:
        for atom in eq.inputs:
            if isinstance(atom, Var):
                consumers[atom].append(eq)
    kept = {a for a in results if isinstance(a, Var)} | set(exclude)
    fused: dict[Var, Equation] = {}
    cheap: dict[Var, bool] = {}
    for eq in equations:
        if eq.primitive not in fused_reads or len(eq.outputs) != 1:
            continue
        (var,) = eq.outputs
        shape = var.aval.shape
        if var in kept or not shape.is_array or not shape.dimensions or shape.dynamic_dimensions:
            continue
        uses = consumers.get(var, [])
        if not uses or any(c.primitive not in fusion_consumers or library_call(c) is not None
                           for c in uses):
            continue
        is_cheap = eq.primitive in cheap_producers and all(
            cheap.get(a, True) for a in eq.inputs if isinstance(a, Var) and a in fused)
        if not is_cheap and (len(uses) > 1 or uses[0].primitive in rereading_consumers):
            continue
        fused[var] = eq
        cheap[var] = is_cheap
    return fused


def fusion_roots(fused: dict[Var, Equation], equations: Sequence[Equation]
                 ) -> dict[Equation, list[Equation]]:
    """For each equation that materialises a result, the fused equations it
    computes inside its loops (in graph order); only roots with any."""
    members: dict[Equation, list[Equation]] = {}
    fused_eqs = {id(eq) for eq in fused.values()}

    def collect(eq: Equation, into: list[Equation], seen: set[int]) -> None:
        for atom in eq.inputs:
            producer = fused.get(atom) if isinstance(atom, Var) else None
            if producer is not None and id(producer) not in seen:
                seen.add(id(producer))
                collect(producer, into, seen)
                into.append(producer)

    for eq in equations:
        if id(eq) in fused_eqs:
            continue
        group: list[Equation] = []
        collect(eq, group, set())
        if group:
            members[eq] = group
    return members
