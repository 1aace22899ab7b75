"""Constant folding: scalar equations of literals become literals.

Differentiation leaves chains such as ``div(1.0, 32.0)``, ``mul(1.0, %that)``,
``neg(%that)`` (the cotangent of a mean): each would be a kernel to compile
and a call on every step.  An equation whose operands are all literals and
whose results are scalars is evaluated once, here, with the primitive's
reference semantics (XLA's own definitions, so the value is the one the
kernel would compute), and its uses read the literal instead.  Equations
with side effects or sub-graphs are left alone.
"""
from __future__ import annotations

import numpy as np

from numxla.tracer.core import BF16Array, impl_rules
from numxla.tracer.graph import Atom, Equation, Graph, Literal, Var
from numxla.tracer.shapes import PrimitiveType

from .dce import COLLECTIVES

__all__ = ["fold_constants"]


def _foldable(eq: Equation) -> bool:
    """Operands all literals (at least one: an op of none, such as
    ``replica_id``, depends on where it runs), scalar results, no effects."""
    return (not eq.primitive.has_side_effect and eq.primitive in impl_rules
            and eq.primitive not in COLLECTIVES and eq.inputs
            and all(isinstance(a, Literal) for a in eq.inputs) and eq.outputs
            and all(o.aval.shape.is_array and o.aval.ndim == 0 for o in eq.outputs)
            and not any(isinstance(v, Graph) or (isinstance(v, tuple) and any(
                isinstance(g, Graph) for g in v)) for v in eq.params.values()))


def _evaluate(eq: Equation) -> list[Literal] | None:
    args = [a.value.view(BF16Array) if a.aval.element_type is PrimitiveType.BF16 else a.value
            for a in eq.inputs]
    params = eq.params
    if eq.primitive.impl_needs_operand_types:
        params = dict(params, operand_types=tuple(a.aval.element_type for a in eq.inputs))
    try:
        with np.errstate(all="ignore"):
            out = impl_rules[eq.primitive](*args, **params)
    except Exception:  # noqa: BLE001 - left to the kernel, which reports it as it would
        return None
    outs = out if eq.primitive.multiple_results else (out,)
    return [Literal(np.asarray(v).reshape(()), o.aval) for v, o in zip(outs, eq.outputs)]


def fold_constants(graph: Graph) -> Graph:
    """``graph`` with its scalar constant equations folded (the same object
    when there are none)."""
    folded: dict[Var, Literal] = {}

    def atom(a: Atom) -> Atom:
        return folded.get(a, a) if isinstance(a, Var) else a

    equations: list[Equation] = []
    for eq in graph.equations:
        if any(isinstance(a, Var) and a in folded for a in eq.inputs):
            eq = Equation(eq.primitive, [atom(a) for a in eq.inputs], eq.outputs, eq.params)
        literals = _evaluate(eq) if _foldable(eq) else None
        if literals is None:
            equations.append(eq)
        else:
            folded.update(zip(eq.outputs, literals))
    if not folded:
        return graph
    return Graph(graph.in_vars, graph.const_vars, graph.const_values, equations,
                 [atom(a) for a in graph.out_atoms], name=graph.name, in_tree=graph.in_tree,
                 out_tree=graph.out_tree)
