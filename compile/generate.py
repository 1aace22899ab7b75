"""Code generation: a graph (a program's cluster, or a whole graph) → the
Python source of one Numba function.

Each equation is emitted by the lowering rule registered for its primitive
(:data:`compile.registry.lowerings`) through a
:class:`compile.codegen.LoweringContext`, its HLO text as a comment before
its code.  The function takes the parameters' 1-D physical buffers, then
the constants, then (for a cluster) the buffers its results go into, then
the workspace and run-time sizes it needs.
"""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from numxla.tracer.graph import Equation, Graph, Literal, Var
from numxla.tracer.shapes import Shape

from .codegen import LoweringContext, literal_text
from .lowering.shape_ops import copy_value  # blocked loops; 16-bit words kept
from .lowering.side_effects import result_value

__all__ = ["GeneratedCode", "generate_source"]


class GeneratedCode(NamedTuple):
    source: str                          # def func_name(*inputs, *constants) -> tuple
    constants: list[tuple[Var, Any]]     # (var, value) to pass after the inputs, in order
    fused: dict[Var, Equation]           # values computed inside their consumers' loops
    parallel: bool                       # some loop is a prange
    workspace_bytes: int                 # size of the uint8 ``ws`` argument (0: none)
    dynamic_inputs: bool                 # an int64 ``dsz`` argument: inputs' run-time sizes
    dynamic_results: tuple[int, ...]     # results whose run-time sizes come as one more result


def generate_source(graph: Graph, out_shapes: Sequence[Shape], func_name: str, *,
                    process_grid: Any = None, output_params: bool = False,
                    flat: str | None = None) -> GeneratedCode:
    """The function computing ``graph``, its results in the layouts of
    ``out_shapes`` (what the caller wants); ``process_grid``: the processes
    of an SPMD program (``None``: one process).

    ``output_params``: the results are written into buffers the caller
    passes (parameters ``out0, out1...`` after the inputs and constants), and the
    function returns nothing — a cluster kernel of a program
    (:mod:`compile.program`), whose caller places them (the workspace, a
    result buffer) so that the code does not depend on where they live.

    ``flat``: ``graph`` is a flat element-wise cluster (1-D values); its loops
    run to this run-time extent (source text), never on threads."""
    ctx = LoweringContext(graph, process_grid, positional_names=output_params)
    ctx.flat = flat
    params = []
    dynamic_inputs = 0  # run-time sizes of dynamic parameters arrive in ``dsz``
    for i, v in enumerate(graph.in_vars):
        ctx.bind_name(v, f"a{i}")
        params.append(f"a{i}")
        if v.aval.shape.is_array and any(v.aval.shape.dynamic_dimensions):
            sizes = []
            for d, bound in enumerate(v.aval.dimensions):
                n = ctx.fresh("n")
                ctx.emit(f"{n} = min(max(dsz[{dynamic_inputs}], 0), {bound})")
                sizes.append(n)
                dynamic_inputs += 1
            ctx.set_sizes(v, sizes)
    for v, value in zip(graph.const_vars, graph.const_values):
        ctx.constant(v, value)
    outputs = [f"out{i}" for i in range(len(out_shapes))] if output_params else []
    inputs = set(graph.in_vars) | set(graph.const_vars)
    for atom, shape, name in zip(graph.out_atoms, out_shapes, outputs):
        if isinstance(atom, Var) and atom not in inputs and atom.aval.shape == shape:
            ctx.carry_slots.setdefault(atom, name)  # the producer writes it in place
    ctx.lower_equations(graph.equations, graph.out_atoms)
    if output_params:
        for atom, shape, name in zip(graph.out_atoms, out_shapes, outputs):
            _emit_into(ctx, atom, shape, name)
        results = []
    else:
        results = [_emit_result(ctx, atom, shape)
                   for atom, shape in zip(graph.out_atoms, out_shapes)]
    params += [f"const{i}" for i in range(len(ctx.constants))] + outputs
    if ctx.workspace_bytes:
        params.append("ws")
    if dynamic_inputs:
        params.append("dsz")
    dynamic_results = tuple(i for i, atom in enumerate(graph.out_atoms)
                            if isinstance(atom, Var) and atom in ctx.runtime_sizes)
    if dynamic_results:  # the results' run-time sizes, one more result
        sizes = ctx.fresh("rsz")
        flat = [n for i in dynamic_results for n in ctx.sizes_of(graph.out_atoms[i])]
        ctx.emit(f"{sizes} = empty_buf({len(flat)}, np.int64)")
        for k, n in enumerate(flat):
            ctx.emit(f"{sizes}[{k}] = {n}")
        results.append(sizes)
    body = "\n".join(ctx.render()) or "    pass"
    if output_params:
        ret = "    return\n"
    else:
        ret = "    return (" + ", ".join(results) + ("," if len(results) == 1 else "") + ")\n"
    return GeneratedCode(f"def {func_name}({', '.join(params)}):\n{body}\n{ret}",
                         ctx.constants, ctx.fused, ctx.parallel, ctx.workspace_bytes,
                         bool(dynamic_inputs), dynamic_results)


def _emit_into(ctx: LoweringContext, atom: Var | Literal, shape: Shape, name: str) -> None:
    """Make the output parameter ``name`` hold ``atom`` in ``shape``'s layout
    (nothing to do when its producer wrote it there)."""
    if isinstance(atom, Var) and ctx.carry_slots.get(atom) == name and \
            ctx.slotted.get(atom) == ctx.name(atom):
        return  # its producer allocated it there and it is still bound to it
    out = Var(atom.aval.__class__(shape))
    ctx.bind_name(out, name)
    if shape.layout.padded_dimensions or shape.layout.tiles:
        ctx.emit(f"{name}[:] = 0")
    _copy(ctx, atom, out)


def _emit_result(ctx: LoweringContext, atom: Var | Literal, shape: Shape) -> str:
    """A result buffer in the requested layout, its own (never an input's,
    a constant's or the workspace)."""
    if not shape.is_array:  # a token or a tuple
        return result_value(ctx, atom, shape)
    if atom.aval.shape == shape and ctx.owns(atom):
        return ctx.name(atom)
    out = Var(atom.aval.__class__(shape))
    name = ctx.alloc(out, zero=bool(shape.layout.padded_dimensions or shape.layout.tiles),
                     own=True)
    _copy(ctx, atom, out)
    return name


def _copy(ctx: LoweringContext, atom: Var | Literal, out: Var) -> None:
    """Write ``atom`` into ``out``'s (zeroed) buffer in its layout, its padding
    holding the layout's padding value."""
    shape = out.aval.shape
    if shape.layout.padding_value not in (None, 0):
        ctx.emit(f"{ctx.name(out)}[:] = "
                 f"{literal_text(shape.layout.padding_value, shape.element_type)}")
    if isinstance(atom, Var):
        copy_value(ctx, atom, out)
    else:
        with ctx.loops(shape) as idx:
            ctx.write(out, idx, ctx.read(atom, idx))
