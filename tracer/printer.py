"""Print a :class:`Graph` as HLO-like text.

Every value is printed with its full XLA shape, layout included::

    ENTRY %f (x: f32[3]{0}, params.w: f32[3,4]{1,0}) -> (f32[3,4]{1,0}) {
      %x = f32[3]{0} parameter(0)                    // x
      %params.w = f32[3,4]{1,0} parameter(1)         // params['w']
      %broadcast_in_dim.0 = f32[3,4]{1,0} broadcast_in_dim(%x), shape={3,4}, broadcast_dimensions={0}
      %add.1 = f32[3,4]{1,0} add(%broadcast_in_dim.0, %params.w)
      ROOT %tuple = (f32[3,4]{1,0}) tuple(%add.1)
    }

Sub-graph parameters (reduce computations, loop bodies, branches) are printed
as computations of their own before the one that uses them, and referred to
by name (``to_apply=%region_0``), as HLO does.  Multi-result equations name
their results ``%sort.3#0``, ``%sort.3#1``.
"""
from __future__ import annotations

import dataclasses
import enum
import re
from typing import Any, Mapping, Sequence

import numpy as np

from .graph import Equation, Graph, Literal, Var
from .shapes import PrimitiveType, Shape

__all__ = ["graph_to_text", "format_param", "subgraphs", "value_names", "equation_text"]


def _shape_text(avals) -> str:
    return "(" + ", ".join(str(a.shape) for a in avals) + ")"


def format_param(value: Any, graph_names: dict[int, str] | None = None) -> str:
    """One equation parameter as text (tuples as ``{a,b}``, graphs by name)."""
    if isinstance(value, Graph):
        return (graph_names or {}).get(id(value), value.name)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "{" + ",".join(format_param(v, graph_names) for v in value) + "}"
    if isinstance(value, PrimitiveType):
        return value.short_name
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, np.dtype) or (isinstance(value, type) and issubclass(value, np.generic)):
        return PrimitiveType.from_dtype(value).short_name
    if isinstance(value, Shape):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        inner = ", ".join(f"{f.name}={format_param(getattr(value, f.name), graph_names)}"
                          for f in dataclasses.fields(value))
        return f"{type(value).__name__}({inner})"
    return str(value)


def _literal_text(lit: Literal) -> str:
    v = lit.value
    if v.dtype == np.bool_:
        text = "true" if bool(v) else "false"
    else:
        text = repr(v.item())
    return f"{text}:{lit.aval.shape.element_type.short_name}"


def _constant_text(value: Any) -> str:
    if not isinstance(value, np.ndarray) and hasattr(value, "__numxla_aval__"):
        return repr(value)  # a token or tuple value
    arr = np.asarray(value)
    if arr.size > 8:
        return "{...}"
    return "{" + ", ".join(repr(x.item()) for x in arr.reshape(-1)) + "}"


_name_ok = re.compile(r"[^A-Za-z0-9_.\-]+")


def _sanitize(hint: str) -> str:
    name = _name_ok.sub(".", hint.replace("'", "")).strip(".")
    return name or "arg"


def _collect_subgraphs(graph: Graph, order: list[Graph], seen: set[int]) -> None:
    for eq in graph.equations:
        for value in eq.params.values():
            for sub in (value if isinstance(value, (tuple, list)) else (value,)):
                if isinstance(sub, Graph) and id(sub) not in seen:
                    seen.add(id(sub))
                    _collect_subgraphs(sub, order, seen)
                    order.append(sub)


def subgraphs(graph: Graph) -> list[Graph]:
    """Every sub-graph held by ``graph``'s equations' parameters, at any depth,
    each once, inner ones before the graphs that hold them."""
    order: list[Graph] = []
    _collect_subgraphs(graph, order, {id(graph)})
    return order


def graph_to_text(graph: Graph,
                  fused_into: Mapping[Equation, Sequence[Equation]] | None = None) -> str:
    """The HLO-like text of ``graph`` and of every sub-graph it holds.

    ``fused_into`` (from a compiler's fusion pass) maps an equation computed
    inside other equations' loops to those: its line says so, and its
    value is printed without a layout (it has no buffer).  The consumer's line
    counts the ops its loops compute."""
    held = subgraphs(graph)
    graph_names: dict[int, str] = {}
    used: set[str] = {graph.name}
    for i, sub in enumerate(held):
        name = f"%{sub.name}" if sub.name not in used else f"%{sub.name}.{i}"
        used.add(sub.name)
        graph_names[id(sub)] = name
    graph_names[id(graph)] = f"%{graph.name}"

    header = (f"HloModule {graph.name}, entry_computation_layout="
              f"{{{_shape_text(graph.in_avals)}->{_shape_text(graph.out_avals)}}}")
    blocks = [header]
    for sub in held:
        blocks.append(_computation_text(sub, graph_names[id(sub)], graph_names, fused_into or {},
                                        entry=False))
    blocks.append(_computation_text(graph, f"%{graph.name}", graph_names, fused_into or {},
                                    entry=True))
    return "\n\n".join(blocks) + "\n"


def _unlaid_text(shape: Shape) -> str:
    """A shape's text without its layout (a value that has no buffer)."""
    return str(Shape(shape.element_type, shape.dimensions)).split("{")[0]


def value_names(graph: Graph, *, positional: bool = False) -> dict[Var, str]:
    """The printed name of every value of ``graph`` (without the ``%``):
    parameters by their hint (``positional``: ``p0, p1...``), constants
    ``constant``, ``constant.1``..., results of equation ``k`` ``<op>.<k>``
    (``<op>.<k>#<j>`` for the ``j``-th of several)."""
    names: dict[Var, str] = {}
    taken: set[str] = set()

    def fresh(base: str) -> str:
        candidate, k = base, 1
        while candidate in taken:
            candidate, k = f"{base}.{k}", k + 1
        taken.add(candidate)
        return candidate

    for i, v in enumerate(graph.in_vars):
        names[v] = fresh(_sanitize(v.hint) if v.hint and not positional else f"p{i}")
    for v in graph.const_vars:
        names[v] = fresh("constant")
    for count, eq in enumerate(graph.equations):
        base = fresh(f"{eq.primitive.name}.{count}")
        if len(eq.outputs) == 1 and not eq.primitive.multiple_results:
            names[eq.outputs[0]] = base
        else:
            for j, o in enumerate(eq.outputs):
                names[o] = f"{base}#{j}"
    return names


def equation_text(eq: Equation, names: Mapping[Var, str],
                  graph_names: dict[int, str] | None = None) -> str:
    """``%<name> = <shape> <op>(<operands>), <params>``: one equation as HLO-like text."""
    if len(eq.outputs) == 1 and not eq.primitive.multiple_results:
        head, type_text = f"%{names[eq.outputs[0]]}", str(eq.outputs[0].aval.shape)
    else:
        head = f"%{names[eq.outputs[0]].split('#')[0]}" if eq.outputs else "%_"
        type_text = _shape_text([o.aval for o in eq.outputs])
    args = ", ".join(_literal_text(a) if isinstance(a, Literal) else f"%{names[a]}"
                     for a in eq.inputs)
    attrs = "".join(f", {k}={format_param(v, graph_names)}"
                    for k, v in eq.params.items() if v is not None)
    return f"{head} = {type_text} {eq.primitive.name}({args}){attrs}"


def _computation_text(graph: Graph, name: str, graph_names: dict[int, str],
                      fused_into: Mapping[Equation, Sequence[Equation]], *, entry: bool) -> str:
    names = value_names(graph)
    lines: list[str] = []
    params = []
    for i, v in enumerate(graph.in_vars):
        nm = names[v]
        params.append(f"{nm}: {v.aval.shape}")
        comment = f"  // {v.hint}" if v.hint and _sanitize(v.hint) != v.hint else ""
        lines.append(f"  %{nm} = {v.aval.shape} parameter({i}){comment}")
    for v, value in zip(graph.const_vars, graph.const_values):
        lines.append(f"  %{names[v]} = {v.aval.shape} constant({_constant_text(value)})")

    def atom(a) -> str:
        return _literal_text(a) if isinstance(a, Literal) else f"%{names[a]}"

    bases = [names[eq.outputs[0]].split("#")[0] if eq.outputs else f"{eq.primitive.name}.{k}"
             for k, eq in enumerate(graph.equations)]
    base_of = {eq: base for eq, base in zip(graph.equations, bases)}
    members: dict[Equation, int] = {}
    for eq in graph.equations:
        for root in fused_into.get(eq, ()):
            members[root] = members.get(root, 0) + 1
    for eq, base in zip(graph.equations, bases):
        note = ""
        if eq in fused_into:
            note = "  // fused into " + ", ".join(f"%{base_of[r]}" for r in fused_into[eq])
        elif eq in members:
            note = f"  // fusion: one loop nest computes this and {members[eq]} fused op(s)"
        if len(eq.outputs) == 1 and not eq.primitive.multiple_results:
            type_text = str(eq.outputs[0].aval.shape)
            if eq in fused_into:
                type_text = _unlaid_text(eq.outputs[0].aval.shape)
        else:
            type_text = _shape_text([o.aval for o in eq.outputs])
        args = ", ".join(atom(a) for a in eq.inputs)
        attrs = "".join(f", {k}={format_param(v, graph_names)}"
                        for k, v in eq.params.items() if v is not None)
        lines.append(f"  %{base} = {type_text} {eq.primitive.name}({args}){attrs}{note}")

    outs = ", ".join(atom(a) for a in graph.out_atoms)
    out_type = _shape_text(graph.out_avals)
    comment = f"  // outputs: {graph.out_tree._text()}" if graph.out_tree is not None else ""
    lines.append(f"  ROOT %tuple = {out_type} tuple({outs}){comment}")
    signature = f"{name} ({', '.join(params)}) -> {out_type}"
    prefix = "ENTRY " if entry else ""
    return f"{prefix}{signature} {{\n" + "\n".join(lines) + "\n}"
