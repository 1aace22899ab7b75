"""The ``Graph`` IR and the interpreter that builds it.

A :class:`Graph` is a flat list of :class:`Equation` s in SSA form, like a
jaxpr or an HLO computation: typed :class:`Var` s, :class:`Literal` scalars,
constants captured once (``const_vars`` with their ``const_values``),
parameters (``in_vars``) and results (``out_atoms``).  Equation parameters
are keyword-only and hashable; a parameter may itself be a ``Graph`` (the
computation of ``reduce``, the body of ``while``...).

:class:`GraphBuilder` is the interpreter that records equations while a
Python function runs on :class:`GraphTracer` s.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from .core import (AbstractValue, BF16Array, Interpreter, Primitive, Tracer, abstractify,
                   current_interpreter, set_interpreter)
from .pytree import TreeDef
from .shapes import PrimitiveType

__all__ = ["Var", "Literal", "Equation", "Graph", "GraphBuilder", "GraphTracer",
           "eval_graph", "Atom"]

_var_ids = itertools.count()


class Var:
    """A typed SSA value of a graph."""

    __slots__ = ("aval", "id", "hint")

    def __init__(self, aval: AbstractValue, hint: str = ""):
        self.aval = aval
        self.id = next(_var_ids)
        self.hint = hint  # a readable name (the argument path for parameters)

    def __repr__(self) -> str:
        return f"Var({self.hint or self.id}: {self.aval})"


class Literal:
    """A scalar constant written inline in the graph (``2.0``, ``True``)."""

    __slots__ = ("value", "aval")

    def __init__(self, value: Any, aval: AbstractValue):
        self.value = np.asarray(value, dtype=aval.dtype)
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.value!r})"


Atom = Var | Literal


class Equation:
    """``outputs = primitive(*inputs, **params)``."""

    __slots__ = ("primitive", "inputs", "outputs", "params")

    def __init__(self, primitive: Primitive, inputs: Sequence[Atom],
                 outputs: Sequence[Var], params: dict[str, Any]):
        self.primitive = primitive
        self.inputs = tuple(inputs)
        self.outputs = tuple(outputs)
        self.params = params

    def __repr__(self) -> str:
        return f"Equation({self.primitive.name}, {len(self.inputs)} in, {len(self.outputs)} out)"


class Graph:
    """A traced function: parameters, captured constants, equations, results.

    ``in_tree``/``out_tree`` record the pytree structure of the traced
    function's arguments and results (``None`` for sub-graphs built from flat
    values).  Graphs hash by identity: a sub-graph parameter is the same
    object for as long as the graph that holds it lives.
    """

    def __init__(self, in_vars: Sequence[Var], const_vars: Sequence[Var],
                 const_values: Sequence[np.ndarray], equations: Sequence[Equation],
                 out_atoms: Sequence[Atom], *, name: str = "main",
                 in_tree: TreeDef | None = None, out_tree: TreeDef | None = None):
        self.in_vars = tuple(in_vars)
        self.const_vars = tuple(const_vars)
        self.const_values = tuple(const_values)
        self.equations = tuple(equations)
        self.out_atoms = tuple(out_atoms)
        self.name = name
        self.in_tree = in_tree
        self.out_tree = out_tree

    @property
    def in_avals(self) -> tuple[AbstractValue, ...]:
        return tuple(v.aval for v in self.in_vars)

    @property
    def out_avals(self) -> tuple[AbstractValue, ...]:
        return tuple(a.aval for a in self.out_atoms)

    def as_text(self) -> str:
        from .printer import graph_to_text
        return graph_to_text(self)

    __str__ = as_text

    def __repr__(self) -> str:
        return f"<Graph {self.name}: {len(self.in_vars)} in, {len(self.equations)} equations>"


def eval_graph(graph: Graph, *args: Any) -> list[Any]:
    """Run ``graph`` on flat ``args`` with the current interpreter.

    Every equation is re-bound, so this evaluates (eager), inlines (while
    tracing) or transforms (under an autodiff interpreter) the graph.
    """
    if len(args) != len(graph.in_vars):
        raise TypeError(f"graph {graph.name} takes {len(graph.in_vars)} arguments, got {len(args)}")
    env: dict[Var, Any] = {v: _typed(c, v.aval) for v, c in zip(graph.const_vars,
                                                                 graph.const_values)}
    env.update(zip(graph.in_vars, args))

    def read(atom: Atom) -> Any:
        return _typed(atom.value, atom.aval) if isinstance(atom, Literal) else env[atom]

    for eq in graph.equations:
        out = eq.primitive.bind(*(read(a) for a in eq.inputs), **eq.params)
        outs = out if eq.primitive.multiple_results else (out,)
        env.update(zip(eq.outputs, outs))
    return [read(a) for a in graph.out_atoms]


def _typed(value: Any, aval: AbstractValue) -> Any:
    """A constant as the interpreters take it: bf16 words (stored as uint16)
    marked as bf16, so that they are not read as u16."""
    if aval.element_type is PrimitiveType.BF16 and type(value) is np.ndarray:
        return value.view(BF16Array)
    return value


# --------------------------------------------------------------------------
# building graphs
# --------------------------------------------------------------------------

class GraphTracer(Tracer):
    """A value inside a function being traced into a graph."""

    # its graph variable is ``_var``: ``x.var()`` is the array method (variance)
    __slots__ = ("_interpreter", "_var")

    def __init__(self, builder: "GraphBuilder", var: Var):
        self._interpreter = builder
        self._var = var

    @property
    def aval(self) -> AbstractValue:  # type: ignore[override]
        return self._var.aval

    def describe_origin(self) -> str:
        return self._interpreter.describe_origin(self._var)

    def __repr__(self) -> str:  # as JAX prints a value traced by jit
        return f"JitTracer({self._var.aval.jax_text()})"


class GraphBuilder(Interpreter):
    """Records every ``bind`` as an equation.

    Values it meets are turned into graph atoms: its own tracers are their
    vars; Python and NumPy scalars become literals; NumPy arrays become
    constants (captured once, however often they are used); tracers of an
    enclosing, still-running interpreter (a sub-graph closing over an outer
    value) become extra parameters listed in ``captured``, which the caller
    passes as explicit operands.  A tracer of a finished trace is a leak.
    """

    def __init__(self, parent: Interpreter | None = None, name: str = "main"):
        self.parent = parent if parent is not None else current_interpreter()
        self.name = name
        self.active = True
        self.in_vars: list[Var] = []
        self.equations: list[Equation] = []
        self._consts: dict[int, tuple[Any, Var]] = {}   # id(array) -> (array, var)
        self.captured: list[Any] = []                   # outer values, in order
        self.captured_vars: list[Var] = []
        self._captured_ids: dict[int, Var] = {}

    # -- inputs -------------------------------------------------------------
    def new_input(self, aval: AbstractValue, hint: str = "") -> GraphTracer:
        var = Var(aval, hint)
        self.in_vars.append(var)
        return GraphTracer(self, var)

    def to_atom(self, x: Any) -> Atom:
        if isinstance(x, GraphTracer) and x._interpreter is self:
            return x._var
        if isinstance(x, Tracer):
            return self._capture(x)
        aval = abstractify(x)
        if aval.shape.is_array and aval.ndim == 0:
            return Literal(x, aval)
        entry = self._consts.get(id(x))
        if entry is None:
            entry = (x, Var(aval.strong(), "constant"))
            self._consts[id(x)] = entry
        return entry[1]

    def _capture(self, tracer: Tracer) -> Var:
        owner = tracer._interpreter
        if not (owner.active and owner.is_ancestor_of(self)):
            raise tracer._leaked_error("it reached another trace")
        var = self._captured_ids.get(id(tracer))
        if var is None:
            var = Var(tracer.aval, "captured")
            self._captured_ids[id(tracer)] = var
            self.captured.append(tracer)
            self.captured_vars.append(var)
        return var

    # -- equations ----------------------------------------------------------
    def interpret(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        if not self.active:
            raise RuntimeError(f"trace {self.name} has finished")
        inputs = [self.to_atom(a) for a in args]
        out_avals = primitive.abstract_eval(*(a.aval for a in inputs), **params)
        outputs = [Var(av) for av in out_avals]
        self.equations.append(Equation(primitive, inputs, outputs, params))
        tracers = tuple(GraphTracer(self, v) for v in outputs)
        return tracers if primitive.multiple_results else tracers[0]

    def build(self, outs: Sequence[Any], *, in_tree: TreeDef | None = None,
              out_tree: TreeDef | None = None) -> Graph:
        """Finish the trace: the graph's parameters are the inputs followed by
        the captured outer values."""
        out_atoms = [self.to_atom(o) for o in outs]
        self.active = False
        const_values = [c for c, _ in self._consts.values()]
        const_vars = [v for _, v in self._consts.values()]
        return Graph(self.in_vars + self.captured_vars, const_vars, const_values,
                     self.equations, out_atoms, name=self.name,
                     in_tree=in_tree, out_tree=out_tree)

    # -- error messages -----------------------------------------------------
    def describe_origin(self, var: Var) -> str:
        """Name the parameters ``var`` depends on, for error messages."""
        producer = {o: eq for eq in self.equations for o in eq.outputs}
        inputs = set(self.in_vars)
        found: list[Var] = []
        stack, seen = [var], set()
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            if v in inputs:
                found.append(v)
            elif v in producer:
                stack.extend(a for a in producer[v].inputs if isinstance(a, Var))
        names = sorted({v.hint or "an argument" for v in found})
        if not names:
            return f"a value traced in {self.name}"
        if var in inputs:
            return f"the argument {names[0]} of {self.name}"
        return f"a value computed from {', '.join(names)} of {self.name}"


def trace_flat(fn: Callable[..., Sequence[Any]], in_avals: Sequence[AbstractValue],
               *, name: str = "main", hints: Sequence[str] | None = None
               ) -> tuple[Graph, list[Any]]:
    """Trace ``fn`` on flat abstract inputs into a graph.

    Returns the graph and the outer values it captured (appended to its
    parameters): the caller passes those as extra operands.
    """
    builder = GraphBuilder(name=name)
    hints = hints or [""] * len(in_avals)
    tracers = [builder.new_input(av, h) for av, h in zip(in_avals, hints)]
    n_inputs = len(builder.in_vars)
    try:
        with set_interpreter(builder):
            outs = list(fn(*tracers))
        graph = builder.build(outs)
    finally:
        builder.active = False
    assert len(graph.in_vars) == n_inputs + len(builder.captured)
    return graph, builder.captured
