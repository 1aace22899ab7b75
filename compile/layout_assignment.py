"""Layout assignment: choose the layouts of intermediate values.

The tracer gives every value the default (row-major) layout.  Before code
generation, :func:`assign_layouts` picks, per equation, a layout for its
result from its operands' layouts, by the rule registered for its primitive
in :data:`layout_rules` (XLA's layout assignment, in the small):

* ``transpose`` takes its operand's physical order, so that it is a bitcast:
  no loop at all, and its consumer (a ``dot``, a reduction) reads the same
  buffer with the permuted layout;
* element-wise ops take the layout of their first array operand that is not
  row-major, so that their loop walks both buffers contiguously.

The graph's parameters and results keep the layouts the caller asked for
(a result whose chosen layout differs is converted once, at the end), and
so does an intermediate that already has a non-default layout (set on
purpose, as the differential tests do).  Only
plain permutations are propagated; tiled or padded layouts stay where the
caller put them (the kernels read them through the layout formula).
"""
from __future__ import annotations


from numxla.tracer.core import AbstractValue
from numxla.tracer.graph import Equation, Graph, Literal, Var
from numxla.tracer.shapes import Layout, Shape

from .registry import layout_rules

__all__ = ["assign_layouts", "layout_rules", "propagate_operand_layout"]



def _plain(shape: Shape) -> bool:
    """An array layout that is a bare permutation (no tiles, padding or dynamic sizes)."""
    layout = shape.layout
    return (shape.is_array and not layout.tiles and not layout.padded_dimensions
            and not shape.dynamic_dimensions)


def propagate_operand_layout(eq: Equation, operand_shapes: list[Shape]) -> Layout | None:
    """The first same-dimension operand's layout, when it is a non-default permutation."""
    out = eq.outputs[0].aval.shape
    for shape in operand_shapes:
        if shape.dimensions == out.dimensions and len(out.dimensions) > 1 and _plain(shape) \
                and not shape.has_default_layout:
            return Layout(tuple(shape.layout.minor_to_major))
    return None


def transpose_layout(eq: Equation, operand_shapes: list[Shape]) -> Layout | None:
    """The layout making ``transpose`` a bitcast of its operand."""
    (x,) = operand_shapes
    if not _plain(x):
        return None
    perm = eq.params["permutation"]
    return Layout(tuple(perm.index(d) for d in x.layout.minor_to_major))


def assign_layouts(graph: Graph) -> Graph:
    """``graph`` with layouts chosen for its intermediate values (a new graph;
    the same one when no rule changes anything)."""
    results = {a for a in graph.out_atoms if isinstance(a, Var)}
    renamed: dict[Var, Var] = {}

    def atom(a):
        return renamed.get(a, a) if isinstance(a, Var) else a

    equations = []
    changed = False
    for eq in graph.equations:
        inputs = [atom(a) for a in eq.inputs]
        rule = layout_rules.get(eq.primitive)
        layout = None
        if rule is not None and len(eq.outputs) == 1 and eq.outputs[0] not in results \
                and eq.outputs[0].aval.shape.has_default_layout:  # a layout set on purpose stays
            shapes = [a.aval.shape for a in inputs if not isinstance(a, Literal)]
            layout = rule(eq, shapes)
        outputs = list(eq.outputs)
        if layout is not None and layout != eq.outputs[0].aval.shape.layout:
            old = eq.outputs[0]
            new = Var(AbstractValue(old.aval.shape.with_layout(layout), old.aval.weak_type),
                      old.hint)
            renamed[old] = new
            outputs = [new]
        if outputs != list(eq.outputs) or inputs != list(eq.inputs):
            changed = True
            eq = Equation(eq.primitive, inputs, outputs, eq.params)
        equations.append(eq)
    if not changed:
        return graph
    return Graph(graph.in_vars, graph.const_vars, graph.const_values, equations,
                 [atom(a) for a in graph.out_atoms], name=graph.name, in_tree=graph.in_tree,
                 out_tree=graph.out_tree)
