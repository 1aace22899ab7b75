"""Programs: how a compiled graph runs, as kernels over physical buffers.

* :class:`ClusterProgram` — the graph as a sequence of shared kernels, one
  per cluster (:mod:`compile.clusters`), run by a small generated Python
  function.  Each kernel writes its results into buffers the program hands
  it: a graph result gets a fresh buffer, an intermediate a slice of the
  program's workspace, placed by liveness so slices are reused once their
  value is dead (XLA's buffer assignment, in the small).  A kernel's code
  never depends on where its buffers live, so it is shared by source.
* :class:`GraphProgram` — the whole graph as one generated function (it
  allocates its results): graphs with tokens, tuples or bounded dynamic
  dimensions, and SPMD programs, whose collectives need the whole graph.

Both run every call with a workspace of their own, taken from a pool (one
per concurrent call).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numba import typeof

from numxla.primitives.shape_ops import broadcast_in_dim_p
from numxla.tracer.graph import Equation, Graph, Var
from numxla.tracer.printer import equation_text, value_names
from numxla.tracer.shapes import Shape

from .clusters import Alias, Call, Cluster, form_clusters
from .codegen import PARALLEL_MIN_WORK, buffer_nbytes
from .fusion import plan_fusion
from .generate import GeneratedCode, generate_source
from .kernel import (Kernel, argument_types, kernel_buffer, kernel_for, library_kernel_of,
                     storage_dtype)
from .layout_index import dense_strides
from .kernels import copy as copy_kernels
from .registry import LIBRARY_MAX_ELEMENTS, Buffer, LibraryCall, Scratch, elementwise

__all__ = ["GraphProgram", "ClusterProgram", "KernelCall"]

_ALIGN = 64


class KernelCall:
    """One kernel of a program with the argument types it is called with."""

    def __init__(self, kernel: Kernel, types: tuple):
        self.kernel = kernel
        self.types = types

    def has_code(self, *, built: bool = False) -> bool:
        return self.kernel.has_code(self.types, built=built)

    def compile(self) -> float:
        return self.kernel.compile(self.types)


class _Pool:
    """Idle workspaces, one per concurrent call (a new one when all are in use)."""

    def __init__(self, make):
        self._make = make
        self._idle: list = []

    def take(self):
        try:
            return self._idle.pop()
        except IndexError:
            return self._make()

    def give(self, entry) -> None:
        self._idle.append(entry)

    def idle(self) -> list[np.ndarray]:
        """The workspaces not in use (each entry's first item is its buffer)."""
        return [entry[0] for entry in self._idle]


class GraphProgram:
    """The whole graph as one generated function that allocates its results."""

    def __init__(self, graph: Graph, out_shapes: Sequence[Shape], *, process_grid: Any = None):
        code = generate_source(graph, out_shapes, "graph_fn", process_grid=process_grid)
        self.kernel = kernel_for(code.source, parallel=code.parallel)
        self.source = self.kernel.source
        self.fused = code.fused
        self.constants = tuple(kernel_buffer(value, var.aval) for var, value in code.constants)
        self.dynamic_inputs = code.dynamic_inputs
        self.dynamic_results = code.dynamic_results
        self.workspace_bytes = code.workspace_bytes
        types = argument_types([v.aval.shape for v in graph.in_vars] +
                               [var.aval.shape for var, _ in code.constants],
                               workspace=bool(code.workspace_bytes), sizes=code.dynamic_inputs)
        self.calls = [KernelCall(self.kernel, types)]
        self._fn = self.kernel.fn
        self._pool = _Pool(self._new_workspace)

    def _new_workspace(self):
        ws = np.empty(self.workspace_bytes, np.uint8)
        return ws, ws.ctypes.data, ws.ctypes.data + ws.nbytes

    def run(self, buffers: list, trailing: tuple) -> tuple:
        if not self.workspace_bytes:
            return self._fn(*buffers, *self.constants, *trailing)
        entry = self._pool.take()
        ws, lo, hi = entry
        try:
            outs = self._fn(*buffers, *self.constants, ws, *trailing)
        finally:
            self._pool.give(entry)
        # a result that is a view of the workspace (never expected: results are
        # allocated on their own) is copied out
        return tuple(b.copy() if isinstance(b, np.ndarray) and lo <= b.ctypes.data < hi else b
                     for b in outs)

    def idle_workspaces(self) -> list[np.ndarray]:
        return self._pool.idle()


class ClusterProgram:
    """The graph as shared cluster kernels run by a generated Python function."""

    def __init__(self, graph: Graph, out_shapes: Sequence[Shape]):
        self.fused = plan_fusion(graph.equations, graph.out_atoms)
        steps = form_clusters(graph, self.fused)
        self._names = value_names(graph)
        self._plan = _BufferPlan(graph, steps, out_shapes)
        self._namespace: dict[str, Any] = {"empty": np.empty, "np": np}
        self.calls: list[KernelCall] = []
        lines = []
        for i, v in enumerate(graph.in_vars):
            self._plan.name[v] = f"a{i}"
        for k, (v, value) in enumerate(zip(graph.const_vars, graph.const_values)):
            self._plan.name[v] = f"c{k}"
            self._namespace[f"c{k}"] = kernel_buffer(value, v.aval)
        for k, step in enumerate(steps):
            if isinstance(step, Alias):
                self._plan.name[step.output] = self._plan.name[step.source]
                lines.append(f"# {equation_text(step.root, self._names)}: a bitcast")
                continue
            if isinstance(step, Call):
                lines += self._library_step(k, step)
                continue
            lines += self._kernel_step(k, step.graph, [o.aval.shape for o in step.outputs],
                                       step.outputs, self._describe(step))
        results = []
        for i, (atom, shape) in enumerate(zip(graph.out_atoms, out_shapes)):
            if self._plan.writes_result(atom, i):
                results.append(self._plan.name[atom])
                continue
            # converted into a buffer of its own: another layout, a parameter's
            # or a bitcast's buffer, a literal, a value returned twice
            source = atom if isinstance(atom, Var) else None
            out = Var(atom.aval.__class__(shape))
            self._plan.result_of[out] = i
            comment = f"result {i} as {shape}"
            copy = _relayout(source, shape)
            if copy is not None:
                lines += self._library_calls(len(steps) + i, (source,), (out,), (copy,), comment)
            else:
                converter = Graph([source] if source is not None else [], (), (), (), [atom],
                                  name="convert")
                lines += self._kernel_step(len(steps) + i, converter, [shape], [out], comment)
            results.append(self._plan.name[out])
        self.workspace_bytes = self._plan.size
        ret = ", ".join(results) + ("," if len(results) == 1 else "")
        params = ", ".join([f"a{i}" for i in range(len(graph.in_vars))] + ["w"])
        body = "\n".join(f"    {line}" for line in lines) or "    pass"
        self.program_source = f"def run({params}):\n{body}\n    return ({ret})\n"
        exec(compile(self.program_source, f"<numxla program {graph.name}>", "exec"),
             self._namespace)
        self._run = self._namespace["run"]
        self._views = self._plan.views
        self._pool = _Pool(self._new_workspace)
        distinct = {id(c.kernel): c.kernel.source for c in self.calls
                    if isinstance(c.kernel, Kernel)}
        self.source = "\n\n".join([f"# The program: {len(self.calls)} kernel calls, "
                                   f"{len(distinct)} distinct generated kernels\n"
                                   f"{self.program_source}", *distinct.values()])

    def _describe(self, cluster: Cluster) -> str:
        """The comment on a kernel call: its root equation, or the roots of a run."""
        if len(cluster.roots) == 1:
            return equation_text(cluster.roots[0], self._names)
        names = ", ".join(f"%{self._names[r.outputs[0]].split('#')[0]}" if r.outputs else
                          r.primitive.name for r in cluster.roots)
        return f"{names}: small ops, one kernel"

    def _library_step(self, k: int, step: Call) -> list[str]:
        """The program's lines running ``step`` (step ``k``)."""
        return self._library_calls(k, step.inputs, step.outputs, step.calls,
                                   equation_text(step.root, self._names))

    def _library_calls(self, k: int, inputs: Sequence[Var], outputs: Sequence[Var],
                       calls: Sequence[LibraryCall], comment: str) -> list[str]:
        """The program's lines running ``calls`` as step ``k``: calls of library
        kernels with buffers (of ``inputs`` and ``outputs``), scratch buffers
        and run-time constants."""
        lines = [self._plan.place(out, k) for out in outputs]
        lines = [line for line in lines if line]
        scratch: dict[int, str] = {}
        for i, (function, arguments) in enumerate(calls):
            kernel = library_kernel_of(function)
            name = f"k{k}_{i}"
            self._namespace[name] = function
            args, types = [], []
            for j, argument in enumerate(arguments):
                if isinstance(argument, Buffer):
                    var = (outputs if argument.result else inputs)[argument.index]
                    args.append(self._plan.name[var])
                    types += argument_types([var.aval.shape])
                elif isinstance(argument, Scratch):
                    dtype = np.dtype(argument.dtype)
                    if argument.index not in scratch:
                        scratch[argument.index] = self._plan.scratch(
                            k, argument.size * dtype.itemsize, dtype)
                    args.append(scratch[argument.index])
                    types.append(typeof(np.empty(0, dtype)))
                else:
                    self._namespace[f"{name}c{j}"] = argument
                    args.append(f"{name}c{j}")
                    types.append(typeof(argument))
            self.calls.append(KernelCall(kernel, tuple(types)))
            lines.append(f"{name}({', '.join(args)})  # {comment}: "
                         f"{kernel.module.__name__}.{kernel.function}")
        self._plan.release(k)
        return lines

    def _kernel_step(self, k: int, cluster: Graph, out_shapes: list[Shape], outputs, comment: str
                     ) -> list[str]:
        """The program's lines running ``cluster`` (step ``k``) into ``outputs``."""
        code = _generate(cluster, out_shapes)
        kernel = kernel_for(code.source, parallel=code.parallel)
        self.fused.update(code.fused)
        shapes = ([v.aval.shape for v in cluster.in_vars] +
                  [var.aval.shape for var, _ in code.constants] + out_shapes)
        self.calls.append(KernelCall(kernel, argument_types(
            shapes, workspace=bool(code.workspace_bytes))))
        name = f"k{k}"
        self._namespace[name] = kernel.fn
        args = [self._plan.name[v] for v in cluster.in_vars]
        for j, (var, value) in enumerate(code.constants):
            self._namespace[f"{name}c{j}"] = kernel_buffer(value, var.aval)
            args.append(f"{name}c{j}")
        lines = []
        for out in outputs:
            lines.append(self._plan.place(out, k))
            args.append(self._plan.name[out])
        if code.workspace_bytes:
            args.append(self._plan.scratch(k, code.workspace_bytes))
        self._plan.release(k)
        lines = [line for line in lines if line]
        lines.append(f"{name}({', '.join(args)})  # {comment}")
        return lines

    def _new_workspace(self):
        ws = np.empty(self.workspace_bytes, np.uint8)
        return ws, tuple(ws[start:start + n].view(dtype) for start, n, dtype in self._views)

    def run(self, buffers: list, trailing: tuple) -> tuple:
        entry = self._pool.take()
        try:
            return self._run(*buffers, entry[1])
        finally:
            self._pool.give(entry)

    def idle_workspaces(self) -> list[np.ndarray]:
        return self._pool.idle()


def _relayout(source: Var | None, shape: Shape) -> LibraryCall | None:
    """A result that is ``source`` in a buffer of its own (another layout, or a
    parameter's or a bitcast's buffer) as the library's strided copy, where
    both layouts are dense permutations: no kernel to generate per shape."""
    if source is None or shape.size > LIBRARY_MAX_ELEMENTS:
        return None
    src, dst = dense_strides(source.aval.shape), dense_strides(shape)
    geometry = None if src is None or dst is None else \
        copy_kernels.copy_geometry(shape.dimensions, src, dst)
    return None if geometry is None else \
        LibraryCall(copy_kernels.strided_copy, (Buffer(0), Buffer(0, True), geometry))


# Generated code of clusters already seen, by structure: the layers of a deep
# model are generated once (clusters without sub-graphs, whose code then
# holds no constants of its own).
_generated: dict[tuple, GeneratedCode] = {}


def _generate(cluster: Graph, out_shapes: list[Shape]) -> GeneratedCode:
    """``cluster``'s kernel code (``generate_source`` with output parameters)."""
    if any(isinstance(v, Graph) or (isinstance(v, tuple) and any(isinstance(g, Graph) for g in v))
           for eq in cluster.equations for v in eq.params.values()):
        return generate_source(cluster, out_shapes, "graph_fn", output_params=True)
    fused = plan_fusion(cluster.equations, cluster.out_atoms)
    flat = _flat_form(cluster, out_shapes, fused)
    if flat is not None:
        code = _generated_for(*flat, flat=_FLAT_EXTENT)
        if not code.constants:
            return code._replace(fused=fused)
    return _generated_for(cluster, out_shapes)._replace(fused=fused)


def _generated_for(cluster: Graph, out_shapes: list[Shape], flat: str | None = None
                   ) -> GeneratedCode:
    """The code of ``cluster``, generated once per structure (its ``fused``:
    the cluster's that generated it)."""
    names = value_names(cluster, positional=True)
    key = (tuple(str(v.aval.shape) for v in cluster.in_vars), tuple(map(str, out_shapes)),
           tuple(names[a] if isinstance(a, Var) else repr(a.value) for a in cluster.out_atoms),
           tuple(equation_text(eq, names) for eq in cluster.equations), flat is not None)
    code = _generated.get(key)
    if code is None:
        code = _generated[key] = generate_source(cluster, out_shapes, "graph_fn",
                                                 output_params=True, flat=flat)
    return code


# An element-wise cluster whose values share one dense layout is generated as
# a loop over its buffers: 1-D values of this placeholder length, the loop
# running to the first output's size at run time — one kernel for every shape
# and dense layout (Numba compiles it once), never on threads.  Clusters with
# work enough for threads keep their shape (a prange is decided by size).
_FLAT_LENGTH = 1 << 30
_FLAT_EXTENT = "out0.size"


def _scalar_broadcast(eq: Equation) -> bool:
    return eq.primitive is broadcast_in_dim_p and not eq.inputs[0].aval.shape.rank


def _flat_form(cluster: Graph, out_shapes: list[Shape], fused: dict[Var, Equation]
               ) -> tuple[Graph, list[Shape]] | None:
    """``cluster`` over 1-D values, and their shapes, when it is flat
    element-wise: element-wise ops and broadcasts of scalars only (those
    fused: ``fused``), every other value of one shape in one dense layout,
    nothing materialised but its results (by element-wise loops)."""
    scalars = {a for eq in cluster.equations if _scalar_broadcast(eq) for a in eq.inputs}
    values = [*(v for v in cluster.in_vars if v not in scalars),
              *(o for eq in cluster.equations for o in eq.outputs)]
    shape = values[0].aval.shape if values else None
    if shape is None or not shape.rank or dense_strides(shape) is None or \
            shape.size * len(cluster.equations) >= PARALLEL_MIN_WORK or \
            any(eq.primitive not in elementwise and not _scalar_broadcast(eq)
                for eq in cluster.equations) or \
            any(s != shape for s in out_shapes) or \
            any(v.aval.shape.dimensions != shape.dimensions or
                v.aval.shape.layout != shape.layout for v in values) or \
            any(not isinstance(a, Var) and a.aval.shape.rank
                for eq in cluster.equations for a in eq.inputs):
        return None
    roots = {eq.outputs[0] for eq in cluster.equations if eq.outputs[0] not in fused}
    looped = {eq.outputs[0] for eq in cluster.equations if eq.primitive in elementwise}
    if not roots <= looped or set(cluster.out_atoms) != roots or \
            len(roots) != len(cluster.out_atoms):
        return None  # a buffer, a loop or a copy of the placeholder length
    flat_vars: dict[Var, Var] = {}

    def flat(atom):
        if not isinstance(atom, Var) or not atom.aval.shape.rank:
            return atom  # a literal, or a scalar a broadcast reads
        if atom not in flat_vars:
            flat_shape = Shape(atom.aval.shape.element_type, (_FLAT_LENGTH,))
            flat_vars[atom] = Var(atom.aval.__class__(flat_shape, atom.aval.weak_type))
        return flat_vars[atom]
    equations = [Equation(eq.primitive, [flat(a) for a in eq.inputs],
                          [flat(o) for o in eq.outputs],
                          {**eq.params, "shape": (_FLAT_LENGTH,)} if _scalar_broadcast(eq)
                          else eq.params) for eq in cluster.equations]
    graph = Graph([flat(v) for v in cluster.in_vars], (), (), equations,
                  [flat(a) for a in cluster.out_atoms], name=cluster.name)
    return graph, [flat(a).aval.shape for a in cluster.out_atoms]


class _BufferPlan:
    """Where each value a program materialises lives: a parameter's buffer, a
    constant, a fresh result buffer, or a slice of the workspace kept while
    the value is live (first fit, freed after the value's last use)."""

    def __init__(self, graph: Graph, steps: list, out_shapes: Sequence[Shape]):
        self.name: dict[Var, str] = {}
        self._shapes = tuple(out_shapes)
        self.views: list[tuple[int, int, np.dtype]] = []   # (start, bytes, dtype) per slice
        self.size = 0
        self._free: list[tuple[int, int]] = []               # (start, bytes), by start
        self._slices: dict[Var, tuple[int, int]] = {}
        self._scratch: list[tuple[int, int]] = []
        # the buffer each value is (a bitcast's is its source's)
        owner: dict[Var, Var] = {}
        for step in steps:
            if isinstance(step, Alias):
                owner[step.output] = owner.get(step.source, step.source)
        self._owner = owner
        # the graph result whose buffer a kernel writes directly (a value's first
        # occurrence among the results, in the layout asked for; a bitcast of a
        # kernel's result makes that result's buffer the graph's)
        self.result_of: dict[Var, int] = {}
        produced = {o for s in steps if not isinstance(s, Alias) for o in s.outputs}
        for i, (atom, shape) in enumerate(zip(graph.out_atoms, out_shapes)):
            if isinstance(atom, Var) and atom.aval.shape == shape:
                buffer = owner.get(atom, atom)
                if buffer in produced and \
                        buffer.aval.shape.physical_size == shape.physical_size:
                    self.result_of.setdefault(buffer, i)
        # the last step reading each buffer (a bitcast's reads count for its source)
        self._last: dict[Var, int] = {}
        for k, step in enumerate(steps):
            if not isinstance(step, Alias):
                for v in step.inputs:
                    self._last[owner.get(v, v)] = k
        for atom in graph.out_atoms:  # results converted at the end stay live to the end
            if isinstance(atom, Var):
                self._last[owner.get(atom, atom)] = len(steps) + len(graph.out_atoms)
        self._dying: dict[int, list[Var]] = {}
        for v, k in self._last.items():
            self._dying.setdefault(k, []).append(v)

    def writes_result(self, atom, i: int) -> bool:
        """Whether result ``i`` (``atom``) is a buffer a kernel wrote as it is."""
        return isinstance(atom, Var) and \
            self.result_of.get(self._owner.get(atom, atom)) == i and atom.aval.shape == \
            self._shapes[i]

    def place(self, var: Var, step: int) -> str:
        """Name ``var``'s buffer; the line allocating it, if it is a result."""
        shape = var.aval.shape
        if var in self.result_of:
            name = self.name[var] = f"r{self.result_of[var]}"
            return f"{name} = empty({shape.physical_size}, np.{storage_dtype(shape).name})"
        start = self._take(buffer_nbytes(shape))
        self._slices[var] = (start, buffer_nbytes(shape))
        self.views.append((start, buffer_nbytes(shape), storage_dtype(shape)))
        self.name[var] = f"w[{len(self.views) - 1}]"
        if self._last.get(var, -1) < step:  # never read: free after this step
            self._dying.setdefault(step, []).append(var)
        return ""

    def scratch(self, step: int, nbytes: int, dtype: np.dtype = np.dtype(np.uint8)) -> str:
        """A kernel's own scratch space (of ``dtype``), for this step only."""
        start = self._take(nbytes)
        self._scratch.append((start, nbytes))
        self.views.append((start, nbytes, dtype))
        return f"w[{len(self.views) - 1}]"

    def release(self, step: int) -> None:
        """Free the slices whose values are dead after ``step`` (and its scratch)."""
        freed = [self._slices.pop(v) for v in self._dying.pop(step, ()) if v in self._slices]
        freed += self._scratch
        self._scratch = []
        for block in freed:
            self._give(block)

    def _take(self, nbytes: int) -> int:
        nbytes = -(-max(nbytes, 1) // _ALIGN) * _ALIGN
        for i, (start, size) in enumerate(self._free):
            if size >= nbytes:
                self._free[i:i + 1] = [(start + nbytes, size - nbytes)] if size > nbytes else []
                return start
        if self._free and self._free[-1][0] + self._free[-1][1] == self.size:
            start = self._free.pop()[0]       # extend the free block at the end
        else:
            start = self.size
        self.size = start + nbytes
        return start

    def _give(self, block: tuple[int, int]) -> None:
        start, nbytes = block
        nbytes = -(-max(nbytes, 1) // _ALIGN) * _ALIGN
        self._free.append((start, nbytes))
        self._free.sort()
        merged: list[tuple[int, int]] = []
        for s, n in self._free:
            if merged and merged[-1][0] + merged[-1][1] == s:
                merged[-1] = (merged[-1][0], merged[-1][1] + n)
            else:
                merged.append((s, n))
        self._free = merged

