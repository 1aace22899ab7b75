"""Dead-code elimination: drop the equations whose results nothing uses.

``jit(grad(f))`` traces the forward pass whole, so values only the forward
result needed (the loss itself, when only gradients are returned) would
otherwise be computed and stored on every call.  An equation stays when a
result of the graph or a kept equation reads one of its outputs, or when it
has a side effect (``has_side_effect``, XLA's attribute: outfeed, send,
custom calls so marked) directly or in a sub-graph it runs (a loop body, a
branch).  Collectives stay too: every process of an SPMD program must reach
them in the same order.  Sub-graphs themselves are left as they are.
"""
from __future__ import annotations

from numxla.primitives import collectives as co
from numxla.tracer.graph import Equation, Graph, Var

__all__ = ["eliminate_dead_code", "has_effects", "COLLECTIVES"]

COLLECTIVES = frozenset((co.all_reduce_p, co.all_gather_p, co.all_to_all_p, co.reduce_scatter_p,
                          co.collective_permute_p, co.collective_broadcast_p))


def _has_effect(eq: Equation, memo: dict[int, bool]) -> bool:
    if eq.primitive.has_side_effect or eq.primitive in COLLECTIVES \
            or eq.params.get("has_side_effect") is True:
        return True
    for value in eq.params.values():
        for sub in (value if isinstance(value, (tuple, list)) else (value,)):
            if isinstance(sub, Graph):
                key = id(sub)
                if key not in memo:
                    memo[key] = False  # (a graph never holds itself)
                    memo[key] = any(_has_effect(e, memo) for e in sub.equations)
                if memo[key]:
                    return True
    return False


def has_effects(graph: Graph) -> bool:
    """Whether running ``graph`` does anything besides computing its results."""
    memo: dict[int, bool] = {}
    return any(_has_effect(eq, memo) for eq in graph.equations)


def eliminate_dead_code(graph: Graph) -> Graph:
    """``graph`` without its dead equations (the same object when none are)."""
    live = {a for a in graph.out_atoms if isinstance(a, Var)}
    memo: dict[int, bool] = {}
    kept: list[Equation] = []
    for eq in reversed(graph.equations):
        if any(o in live for o in eq.outputs) or _has_effect(eq, memo):
            kept.append(eq)
            live.update(a for a in eq.inputs if isinstance(a, Var))
    if len(kept) == len(graph.equations):
        return graph
    kept.reverse()
    used_consts = [(v, c) for v, c in zip(graph.const_vars, graph.const_values) if v in live]
    return Graph(graph.in_vars, [v for v, _ in used_consts], [c for _, c in used_consts], kept,
                 graph.out_atoms, name=graph.name, in_tree=graph.in_tree,
                 out_tree=graph.out_tree)
