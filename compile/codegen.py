"""Graph → the Python source of one Numba function.

The whole graph becomes one ``@njit`` function taking and returning 1-D
physical buffers, so a call costs one Numba dispatch.  Each equation is
emitted by the lowering rule registered for its primitive in
:data:`lowerings` (one module per op family under ``compile/kernels``), as
plain explicit loops — which Numba compiles far faster than NumPy array
expressions.  Every value is addressed through its layout's linear-index
formula (:mod:`compile.layout_index`); loops nest so that the innermost one
walks the most-minor physical dimension.  Each equation's HLO text precedes
its code as a comment.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from tracer.core import Primitive
from tracer.graph import Equation, Graph, Literal, Var
from tracer.printer import format_param
from tracer.shapes import PrimitiveType, Shape

from .layout_index import linear_index_expr, loop_order

__all__ = ["lowerings", "LoweringContext", "generate_source", "dtype_name", "literal_text"]

Lowering = Callable[["LoweringContext", Equation], None]
lowerings: dict[Primitive, Lowering] = {}

_UNSUPPORTED_IN_KERNELS = (PrimitiveType.F16, PrimitiveType.BF16)


def dtype_name(t: PrimitiveType) -> str:
    """The NumPy scalar type as source text (``np.float32``)."""
    return "np.bool_" if t is PrimitiveType.PRED else f"np.{t.numpy_dtype.name}"


def literal_text(value: Any, t: PrimitiveType) -> str:
    """A scalar constant of element type ``t`` as source text."""
    v = np.asarray(value, dtype=t.numpy_dtype).item()
    if t is PrimitiveType.PRED:
        return "True" if v else "False"
    if t.is_complex:
        return f"{dtype_name(t)}(complex({_float_text(v.real)}, {_float_text(v.imag)}))"
    if t.is_floating:
        return f"{dtype_name(t)}({_float_text(v)})"
    return f"{dtype_name(t)}({int(v)})"


def _float_text(v: float) -> str:
    if v != v:
        return "np.nan"
    if v in (float("inf"), float("-inf")):
        return "np.inf" if v > 0 else "-np.inf"
    return repr(float(v))


class LoweringContext:
    """What a lowering rule writes with: buffer names, loops, element access."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.lines: list[str] = []
        self._indent = 1
        self._names: dict[Var, str] = {}
        self._counter = 0
        self.aliases: dict[Var, Var] = {}  # value -> the value whose buffer it shares

    # -- names and lines ----------------------------------------------------------
    def fresh(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def name(self, var: Var) -> str:
        return self._names[var]

    def bind_name(self, var: Var, name: str) -> None:
        self._names[var] = name

    def emit(self, line: str) -> None:
        self.lines.append("    " * self._indent + line)

    @contextlib.contextmanager
    def block(self, header: str) -> Iterator[None]:
        self.emit(header)
        self._indent += 1
        try:
            yield
        finally:
            self._indent -= 1

    # -- buffers -----------------------------------------------------------------
    def alloc(self, var: Var, *, zero: bool = False) -> str:
        """Allocate the output buffer of ``var`` and return its name."""
        shape = var.aval.shape
        _check_supported(shape)
        name = self.fresh("v")
        self._names[var] = name
        fill = "np.zeros" if zero else "np.empty"
        self.emit(f"{name} = {fill}({shape.physical_size}, {dtype_name(shape.element_type)})")
        return name

    def alias(self, out: Var, source: Var) -> None:
        """``out`` shares ``source``'s buffer (a bitcast such as a row-major reshape)."""
        self._names[out] = self._names[source]
        self.aliases[out] = self.aliases.get(source, source)

    def read(self, atom: Var | Literal, index: Sequence[str]) -> str:
        """Source text for element ``index`` (logical) of ``atom``."""
        if isinstance(atom, Literal):
            return literal_text(atom.value, atom.aval.element_type)
        return f"{self._names[atom]}[{linear_index_expr(atom.aval.shape, list(index))}]"

    def write(self, var: Var, index: Sequence[str], value: str) -> None:
        self.emit(f"{self._names[var]}[{linear_index_expr(var.aval.shape, list(index))}] = {value}")

    @contextlib.contextmanager
    def loops(self, shape: Shape, prefix: str = "i") -> Iterator[list[str]]:
        """Loops over every logical index of ``shape``, innermost on its most-minor
        physical dimension; yields the index variable of each logical dimension."""
        rank = len(shape.dimensions)
        index = [f"{prefix}{d}" for d in range(rank)]
        with contextlib.ExitStack() as stack:
            for d in loop_order(shape):
                stack.enter_context(self.block(f"for {index[d]} in range({shape.dimensions[d]}):"))
            yield index


def _check_supported(shape: Shape) -> None:
    if shape.element_type in _UNSUPPORTED_IN_KERNELS:
        raise NotImplementedError(f"compiled kernels do not handle {shape.element_type.short_name} "
                                  f"yet ({shape}); Numba has no 16-bit float arithmetic")


def default_shape(shape: Shape) -> Shape:
    return Shape(shape.element_type, shape.dimensions)


def equation_comment(eq: Equation, ctx: LoweringContext) -> str:
    outs = ", ".join(str(o.aval.shape) for o in eq.outputs)
    params = ", ".join(f"{k}={format_param(v)}" for k, v in eq.params.items() if v is not None)
    return f"# {outs} = {eq.primitive.name}({params})"


def generate_source(graph: Graph, out_shapes: Sequence[Shape], func_name: str) -> str:
    """The module source defining ``func_name(*inputs, *consts) -> tuple of buffers``.

    ``out_shapes`` are the layouts the caller wants the results in.
    """
    ctx = LoweringContext(graph)
    params = []
    for i, v in enumerate(graph.in_vars):
        _check_supported(v.aval.shape)
        ctx.bind_name(v, f"a{i}")
        params.append(f"a{i}")
    for i, v in enumerate(graph.const_vars):
        ctx.bind_name(v, f"c{i}")
        params.append(f"c{i}")
    for eq in graph.equations:
        rule = lowerings.get(eq.primitive)
        if rule is None:
            raise NotImplementedError(f"no Numba lowering registered for {eq.primitive.name}")
        ctx.emit(equation_comment(eq, ctx))
        rule(ctx, eq)
    results = [_emit_result(ctx, atom, shape) for atom, shape in zip(graph.out_atoms, out_shapes)]
    body = "\n".join(ctx.lines) or "    pass"
    ret = ", ".join(results) + ("," if len(results) == 1 else "")
    return (f"def {func_name}({', '.join(params)}):\n{body}\n    return ({ret})\n")


def _emit_result(ctx: LoweringContext, atom: Var | Literal, shape: Shape) -> str:
    """A result buffer in the requested layout, never sharing an input's buffer."""
    _check_supported(shape)
    if isinstance(atom, Literal) or atom.aval.shape != shape or \
            ctx.aliases.get(atom, atom) in ctx.graph.in_vars or \
            ctx.aliases.get(atom, atom) in ctx.graph.const_vars:
        out = Var(atom.aval.__class__(shape))
        name = ctx.alloc(out, zero=bool(shape.layout.padded_dimensions or shape.layout.tiles))
        if shape.layout.padding_value not in (None, 0):
            ctx.emit(f"{name}[:] = {literal_text(shape.layout.padding_value, shape.element_type)}")
        with ctx.loops(shape) as idx:
            ctx.write(out, idx, ctx.read(atom, idx))
        return name
    return ctx.name(atom)
