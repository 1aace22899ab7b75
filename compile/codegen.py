"""The lowering context: what the lowering rules write generated code with.

A lowering rule (registered per primitive in :data:`compile.registry.lowerings`,
one module per op family under ``compile/lowering``) emits an equation as
plain explicit loops — which Numba compiles far faster than NumPy array
expressions — through a :class:`LoweringContext`: buffer names and
allocation (the workspace, output slots), loops over a shape in its physical
order, element reads and writes through the layout's linear-index formula
(:mod:`compile.layout_index`), fused producers computed inside the loops that
read them (:mod:`compile.fusion`), and sub-graphs inlined (loop bodies,
branches) or as scalar expressions (reducers, comparators).
:mod:`compile.generate` drives it over a whole graph or cluster.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

import numpy as np

from numxla.tracer.graph import Equation, Graph, Literal, Var
from numxla.tracer.printer import equation_text, value_names
from numxla.tracer.shapes import PrimitiveType, Shape

from .fusion import plan_fusion
from .registry import (Lowering, ScalarExpr, dynamic_lowerings, fused_reads, lowerings,  # noqa: F401
                       scalar_exprs, vector_math)
from .source import Block, Line, Loop
from .layout_index import linear_index_expr, loop_order

__all__ = ["LoweringContext", "dtype_name", "literal_text", "storage_dtype_name", "buffer_nbytes",
           "equation_comment", "default_shape", "worth_threads"]

# 16-bit floats: buffers hold uint16 words, kernels compute in f32 (see kernels/float16.py).
_HALF = {PrimitiveType.F16: ("f16_to_f32", "f32_to_f16"),
         PrimitiveType.BF16: ("bf16_to_f32", "f32_to_bf16")}


def dtype_name(t: PrimitiveType) -> str:
    """The NumPy scalar type kernels *compute* in, as source text (``np.float32``;
    f32 for the 16-bit floats)."""
    if t in _HALF:
        return "np.float32"
    return "np.bool_" if t is PrimitiveType.PRED else f"np.{t.numpy_dtype.name}"


def buffer_nbytes(shape: Shape) -> int:
    """Bytes of the physical buffer of an array ``shape`` (16-bit floats as words)."""
    t = shape.element_type
    return shape.physical_size * (2 if t in _HALF else t.numpy_dtype.itemsize)


def storage_dtype_name(t: PrimitiveType) -> str:
    """The element type of a buffer holding ``t`` (uint16 words for f16 and bf16)."""
    return "np.uint16" if t in _HALF else dtype_name(t)


def literal_text(value: Any, t: PrimitiveType) -> str:
    """A scalar constant of element type ``t`` as source text."""
    if t in _HALF:  # bf16 values may come as their uint16 words
        arr = np.asarray(value)
        if t is PrimitiveType.BF16 and arr.dtype == np.uint16:
            from numxla.tracer.shapes import bf16_to_f32
            arr = bf16_to_f32(arr)
        return f"np.float32({_float_text(float(arr.astype(np.float32)))})"
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

    def __init__(self, graph: Graph, process_grid: Any = None, *, positional_names: bool = False):
        self.graph = graph
        # names of values for the equations' comments (``%mul.17``); a cluster
        # kernel's parameters are ``%p0, %p1...``, so its text is the same
        # wherever the cluster occurs
        self.value_names = value_names(graph, positional=positional_names)
        # A program of several processes (``compile.pmap``): collectives
        # exchange data with the other processes at run time.
        self.process_grid = process_grid
        self.constants: list[Any] = []  # values passed as the trailing parameters
        self.body = Block()                  # the function body, rendered last
        self._open: list[Block] = [self.body]  # the block being written, innermost last
        # vectorised math calls written so far (transcendentals): the work
        # that makes a loop worth threads (see ``loops``)
        self.math_calls = 0
        self._names: dict[Var, str] = {}
        self._counter = 0
        self.aliases: dict[Var, Var] = {}  # value -> the value whose buffer it shares
        self.fused: dict[Var, Equation] = {}  # values computed inside their consumers' loops
        # Loops may take a fast path that is wrong for rare inputs (trig of
        # huge arguments): each such use counts them in a counter of its own
        # (a prange reduction variable may be updated once per iteration),
        # initialised in the ``guards`` block before the loop; the equation is
        # then emitted again with ``exact`` set, behind ``if counters != 0``.
        self.guards: Block | None = None
        self.guard_counters: list[str] = []
        self.exact = False
        self._rerun_outputs: set[Var] = set()
        self.parallel = False  # some loop is a prange: compile with parallel=True
        self.index_scope = ""  # suffix of loop index names (see index_name)
        # values already computed into local names, by key, while their block is open
        self._computed: dict[Any, str] = {}
        self._defined_in: dict[int, list[Any]] = {}
        # a flat element-wise kernel (compile.program): its 1-D loops run to
        # this run-time extent (source text), never on threads
        self.flat: str | None = None
        # Big intermediates live in one workspace buffer, passed in as ``ws``
        # and kept by the caller between calls: fresh multi-megabyte
        # allocations would page-fault on every call (and on every iteration
        # of a loop).  The results of the graph and of every sub-graph being
        # inlined get buffers of their own: they outlive the call, the loop
        # iteration or the branch.  Sub-graph results that share a workspace
        # buffer (a bitcast of an intermediate) are copied by the op
        # (``control_flow._result``).
        self.results: set[Var] = {a for a in graph.out_atoms if isinstance(a, Var)}
        self._inlined_results: list[set[Var]] = []
        self.workspace_bytes = 0
        # Values whose buffer is their own (allocated for them, or handed over
        # by a host call): a loop may carry them and the function may return
        # them as they are.  Anything else (a workspace slice, a value bound
        # to another op's buffer by name) is copied where it escapes.
        self.owned: set[Var] = set()
        # A loop's new carries written alternately into two workspace slots
        # (``control_flow._RotatingCarries``): body result -> the slot's name.
        self.carry_slots: dict[Var, str] = {}
        self.slotted: dict[Var, str] = {}  # value -> the name of its carry slot, once allocated
        self.runtime_sizes: dict[Var, list[str]] = {}  # see lowering/dynamic.py

    # -- names and lines ----------------------------------------------------------
    def index_name(self, prefix: str, d: int) -> str:
        """The index variable of dimension ``d`` of a loop nest (``i0``...),
        distinct inside an array computation nested in another loop nest."""
        return f"{prefix}{d}{self.index_scope}"

    def fresh(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}{self._counter}"

    def name(self, var: Var) -> str:
        return self._names[var]

    def bind_name(self, var: Var, name: str) -> None:
        self._names[var] = name

    def emit(self, line: str) -> Line:
        """Append a statement to the block being written."""
        statement = Line(line)
        self._open[-1].body.append(statement)
        return statement

    @contextlib.contextmanager
    def block(self, header: str | Loop) -> Iterator[Block]:
        """Statements written inside are under ``header`` (``if x:``, a ``Loop``)."""
        block = Block(header)
        self._open[-1].body.append(block)
        self._open.append(block)
        try:
            yield block
        finally:
            self._open.pop()
            for key in self._defined_in.pop(id(block), ()):  # its names are out of scope
                self._computed.pop(key, None)

    def computed(self, key: Any) -> str | None:
        """The name a value was computed into earlier in a block still open
        (a fused element read again: computed once, not once per use)."""
        return self._computed.get(key)

    def remember(self, key: Any, name: str) -> None:
        """``name`` holds ``key``'s value for the rest of the current block."""
        self._computed[key] = name
        self._defined_in.setdefault(id(self._open[-1]), []).append(key)

    def render(self) -> list[str]:
        """The function body's source lines."""
        out: list[str] = []
        self.body.render(1, out)
        return out

    # -- buffers -----------------------------------------------------------------
    def alloc(self, var: Var, *, zero: bool = False, own: bool = False) -> str:
        """Allocate the output buffer of ``var`` and return its name (``own``:
        a buffer of its own even for an intermediate, never the workspace)."""
        if self.exact and var in self._rerun_outputs:  # the exact re-run: same buffer
            return self._names[var]
        shape = var.aval.shape
        name = self.fresh("v")
        self._names[var] = name
        dtype = storage_dtype_name(shape.element_type)
        nbytes = buffer_nbytes(shape)
        slot = self.carry_slots.get(var)
        if slot is not None or (not own and nbytes >= WORKSPACE_MIN_BYTES and
                                self.is_intermediate(var)):
            # an intermediate: a slice of the workspace kept between calls;
            # a loop's new carry: the slot its loop hands it this iteration
            # (its own until the loop ends: see control_flow._RotatingCarries)
            if slot is not None:
                self.owned.add(var)
                self.slotted[var] = name
            self.emit(f"{name} = {slot or self.workspace_slice(nbytes, dtype)}")
            if zero:
                self.emit(f"{name}[:] = 0")
            return name
        self.owned.add(var)
        fill = "zeros_buf" if zero else "empty_buf"
        self.emit(f"{name} = {fill}({shape.physical_size}, {dtype})")
        return name

    def owns(self, atom: Var | Literal) -> bool:
        """Whether ``atom``'s buffer (through aliases) is its own: see ``owned``."""
        return isinstance(atom, Var) and self.aliases.get(atom, atom) in self.owned

    def is_intermediate(self, var: Var) -> bool:
        """Whether ``var`` is dead by the time the equation that makes it runs
        again (it is no result of the graph or of a sub-graph being inlined),
        so its buffer may be reused: the workspace, a collective's shared result."""
        return var not in self.results and not any(var in r for r in self._inlined_results)

    def workspace_slice(self, nbytes: int, dtype: str) -> str:
        """Source text of a new, 64-byte aligned slice of the workspace."""
        start = -(-self.workspace_bytes // 64) * 64
        self.workspace_bytes = start + nbytes
        return f"ws[{start}:{start + nbytes}].view({dtype})"

    def sizes_of(self, atom: Var | Literal) -> list[str]:
        """The run-time size of each dimension of ``atom`` as source text: a
        variable for a bounded dynamic dimension, the bound otherwise."""
        sizes = self.runtime_sizes.get(atom) if isinstance(atom, Var) else None
        return list(sizes) if sizes is not None else [str(d) for d in atom.aval.dimensions]

    def set_sizes(self, var: Var, sizes: Sequence[str]) -> None:
        self.runtime_sizes[var] = list(sizes)

    def alias(self, out: Var, source: Var) -> None:
        """``out`` shares ``source``'s buffer (a bitcast such as a row-major reshape)."""
        self._names[out] = self._names[source]
        self.aliases[out] = self.aliases.get(source, source)

    def read(self, atom: Var | Literal, index: Sequence[str]) -> str:
        """Source text for element ``index`` (logical) of ``atom``."""
        if isinstance(atom, Literal):
            return literal_text(atom.value, atom.aval.element_type)
        producer = self.fused.get(atom)
        if producer is not None:
            return fused_reads[producer.primitive](self, producer, index)
        element = f"{self._names[atom]}[{linear_index_expr(atom.aval.shape, list(index))}]"
        half = _HALF.get(atom.aval.element_type)
        return f"{half[0]}({element})" if half else element

    def write(self, var: Var, index: Sequence[str], value: str) -> None:
        half = _HALF.get(var.aval.element_type)
        if half:
            value = f"{half[1]}({value})"
        self.emit(f"{self._names[var]}[{linear_index_expr(var.aval.shape, list(index))}] = {value}")

    def constant(self, var: Var, value: Any) -> str:
        """Bind ``var`` to a constant array passed as a parameter of the function
        (big constants are arguments, not globals: Numba could not cache them)."""
        name = f"const{len(self.constants)}"
        self.constants.append((var, value))
        self._names[var] = name
        return name

    # -- sub-graphs ---------------------------------------------------------------
    def use_guard(self) -> str | None:
        """The counter a fast loop path increments for inputs it gets wrong
        (None: emit the exact code)."""
        if self.exact or self.guards is None:
            return None
        counter = self.fresh("nbig")
        self.guards.body.append(Line(f"{counter} = 0"))
        self.guard_counters.append(counter)
        return counter

    def lower_equations(self, equations: Sequence[Equation], results: Sequence[Var | Literal]
                        ) -> None:
        """Emit ``equations`` (of a graph whose outputs are ``results``), fusing
        element-wise producers into their consumers' loops."""
        dynamic = self._dynamic_values(equations)
        self.fused.update(plan_fusion(equations, results, exclude=dynamic))
        for eq in equations:
            if len(eq.outputs) == 1 and eq.outputs[0] in self.fused:
                continue  # emitted inside its consumers' loops
            if any(v in dynamic for v in eq.outputs):
                rule = dynamic_lowerings.get(eq.primitive)
                if rule is None:
                    raise NotImplementedError(
                        f"{eq.primitive.name}: operands or results with bounded dynamic "
                        f"dimensions (set_dimension_size) are compiled for element-wise ops, "
                        f"broadcast_in_dim, the shortcut reductions and get/set_dimension_size "
                        f"only; run this function eagerly")
                self.emit(equation_comment(eq, self))
                self._lower_guarded(rule, eq)
                continue
            rule = lowerings.get(eq.primitive)
            if rule is None:
                raise NotImplementedError(f"no Numba lowering registered for {eq.primitive.name}")
            self.emit(equation_comment(eq, self))
            self._lower_guarded(rule, eq)

    def _dynamic_values(self, equations: Sequence[Equation]) -> set[Var]:
        """The values whose run-time sizes may be smaller than their bounds:
        those of a dynamic shape, and every result of an op with such an
        operand (the reference semantics cut operands to their run-time
        sizes, so results follow them whatever the shape rule says)."""
        dynamic = {v for v in self.runtime_sizes}
        for eq in equations:
            if any(isinstance(a, Var) and a in dynamic for a in eq.inputs) or any(
                    o.aval.shape.is_array and any(o.aval.shape.dynamic_dimensions)
                    for o in eq.outputs):
                dynamic.update(eq.outputs)
        return dynamic

    def _lower_guarded(self, rule: Lowering, eq: Equation) -> None:
        saved = self.guards, self.guard_counters
        self.guards, self.guard_counters = Block(), []
        self._open[-1].body.append(self.guards)
        rule(self, eq)
        if self.guard_counters and not self.exact:
            with self.block(f"if {' + '.join(self.guard_counters)} != 0:"):
                self.exact, self._rerun_outputs = True, set(eq.outputs)
                try:
                    rule(self, eq)
                finally:
                    self.exact, self._rerun_outputs = False, set()
        self.guards, self.guard_counters = saved

    def inline_graph(self, graph: Graph, inputs: Sequence[str]) -> list[str]:
        """Emit ``graph``'s equations here, its parameters bound to the buffers
        named ``inputs``; returns the buffer names (or scalar literal texts) of
        its results.  Used for loop bodies, branches and calls."""
        for var, name in zip(graph.in_vars, inputs):
            self._names[var] = name
        for var, value in zip(graph.const_vars, graph.const_values):
            self.constant(var, value)
        self.value_names.update(value_names(graph, positional=True))
        self._inlined_results.append({a for a in graph.out_atoms if isinstance(a, Var)})
        try:
            self.lower_equations(graph.equations, graph.out_atoms)
        finally:
            self._inlined_results.pop()
        out = []
        for atom in graph.out_atoms:
            if isinstance(atom, Literal):  # a buffer holding the literal, in storage form
                holder = Var(atom.aval)
                out.append(self.alloc(holder))
                self.write(holder, [], literal_text(atom.value, atom.aval.element_type))
            else:
                out.append(self._names[atom])
        return out

    def count_math(self, eq: Equation) -> None:
        """Note that the code being written computes ``eq`` once more per element."""
        operand = eq.inputs[-1].aval.element_type if eq.inputs else eq.outputs[0].aval.element_type
        if eq.primitive in vector_math and operand.is_floating:
            self.math_calls += 1

    def scalar_graph(self, graph: Graph, args: Sequence[str]) -> list[str]:
        """Emit a computation on rank-0 values (a reducer, a comparator, a
        scatter update) as scalar statements on the expressions ``args``;
        returns the expressions of its results.

        A computation with array ops inside (XLA allows a comparator that
        broadcasts its scalars, takes an iota, slices and reshapes back) is
        emitted as a small array program on rank-0 buffers instead."""
        if not all(eq.primitive in scalar_exprs and not any(v.aval.ndim for v in eq.outputs)
                   for eq in graph.equations):
            return self._array_graph(graph, args)
        env: dict[Var, str] = dict(zip(graph.in_vars, args))
        for var, value in zip(graph.const_vars, graph.const_values):
            env[var] = literal_text(np.asarray(value).reshape(()), var.aval.element_type)

        def text(atom: Var | Literal) -> str:
            return literal_text(atom.value, atom.aval.element_type) if isinstance(atom, Literal) \
                else env[atom]

        for eq in graph.equations:
            rule = scalar_exprs[eq.primitive]
            operand_type = eq.inputs[-1].aval.element_type if eq.inputs else \
                eq.outputs[0].aval.element_type
            value = rule(operand_type, eq.params, *(text(a) for a in eq.inputs))
            self.count_math(eq)
            name = self.fresh("s")
            self.emit(f"{name} = {value}")
            env[eq.outputs[0]] = name
        return [text(a) for a in graph.out_atoms]

    def _array_graph(self, graph: Graph, args: Sequence[str]) -> list[str]:
        """``graph`` on scalars ``args`` through its array lowerings: each
        argument written to a rank-0 buffer, the graph inlined on them, its
        results read back as scalars."""
        buffers = []
        for var, arg in zip(graph.in_vars, args):
            holder = Var(var.aval)
            buffers.append(self.alloc(holder, own=True))
            self.write(holder, [], arg)
        saved, self.index_scope = self.index_scope, "_" + self.fresh("n")
        try:  # its loops must not reuse the index names of the loops around it
            results = self.inline_graph(graph, buffers)
        finally:
            self.index_scope = saved
        out = []
        for atom, name in zip(graph.out_atoms, results):
            holder = Var(atom.aval)
            self._names[holder] = name
            value = self.fresh("s")
            self.emit(f"{value} = {self.read(holder, [])}")
            out.append(value)
        return out

    @contextlib.contextmanager
    def loops(self, shape: Shape, prefix: str = "i", *, may_parallelise: bool = False
              ) -> Iterator[list[str]]:
        """Loops over every logical index of ``shape``, innermost on its most-minor
        physical dimension; yields the index variable of each logical dimension.

        ``may_parallelise``: the iterations are independent (each writes its
        own elements; scalar ``+=`` reductions allowed), so the outermost loop
        becomes a ``prange`` when the body is worth two threads
        (:func:`worth_threads`)."""
        dims = shape.dimensions
        if self.flat is not None and len(dims) == 1:  # a flat kernel: the extent at run time
            loops = [Loop(self.index_name(prefix, 0), self.flat)]
            index = [loops[0].index]
        else:
            # a dimension of size 1 is index 0, no loop (each loop costs Numba compile time)
            index = [self.index_name(prefix, d) if n != 1 else "0" for d, n in enumerate(dims)]
            loops = [Loop(index[d], str(dims[d])) for d in loop_order(shape) if dims[d] != 1]
        calls = self.math_calls
        with contextlib.ExitStack() as stack:
            for loop in loops:
                stack.enter_context(self.block(loop))
            yield index
        if may_parallelise and loops and self.flat is None and \
                worth_threads(shape.size, self.math_calls - calls):
            loops[0].parallel = True
            self.parallel = True


# Threads pay for loops with much work per element (measured on 2 cores:
# a parallel copy is slower than a serial one; a transcendental chain over
# 4M elements is not), and cost compile time (parallel=True).
PARALLEL_MIN_WORK = 1 << 23
WORKSPACE_MIN_BYTES = 1 << 16   # smaller buffers: malloc reuses them without page faults


def worth_threads(elements: int, math_calls: int) -> bool:
    """Whether a loop nest of ``elements`` iterations, each making
    ``math_calls`` vectorised math calls, is worth splitting across threads."""
    return math_calls > 0 and elements * math_calls >= PARALLEL_MIN_WORK


def default_shape(shape: Shape) -> Shape:
    return Shape(shape.element_type, shape.dimensions)


def equation_comment(eq: Equation, ctx: LoweringContext) -> str:
    """The equation as HLO-like text, its values named as the graph's text names them."""
    return "# " + equation_text(eq, ctx.value_names)
