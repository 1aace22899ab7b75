"""Lowerings of Gather and Scatter (primitives/indexing.py), batching
dimensions included.

* ``gather``: a loop over the batch positions of the result reads each start
  index vector once, clamps every start so the whole slice fits (XLA's
  behaviour, as the reference semantics do), then copies the slice with
  inner loops over the offset dimensions of the result.
* ``scatter`` (any update computation, inlined as scalar statements with
  ``ctx.scalar_graph``; ``None`` replaces; variadic) and
  ``scatter_add/mul/min/max``: the operands are copied into the results,
  then for every index vector, in row-major order (the order the updates are
  applied in, which decides the result where windows overlap), the update
  window is combined into the result when it fits entirely in the operand;
  a window that does not fit is skipped (XLA's behaviour).  Within one
  window every target is distinct, so the window loops follow the result's
  physical order.

``mode="clip"``/``"fill"`` are built by the user functions out of other
primitives (clamped indices, a select), so they need nothing here.  No index
value, however large, reads or writes outside a buffer.
"""
from __future__ import annotations

import contextlib
from typing import Sequence

from numxla.primitives import indexing
from numxla.tracer.graph import Equation, Literal, Var
from numxla.tracer.shapes import PrimitiveType

from ..codegen import LoweringContext
from ..layout_index import loop_order
from ..registry import lowerings
from .shape_ops import (affine, alloc, box_loops, clamp_start, copy_value, index_as_int64,
                        move_read, move_write)


def _order(shape, dims: Sequence[int]) -> list[int]:
    """``dims`` from most major to most minor in ``shape``'s layout."""
    return [d for d in loop_order(shape) if d in dims]


def _read_index(ctx: LoweringContext, indices: Var | Literal, batch: Sequence[str], k: int
                ) -> str:
    """Component ``k`` of the index vector at batch position ``batch`` (its own type)."""
    return ctx.read(indices, list(batch) + [str(k)])


# -- gather ------------------------------------------------------------------------------

def _lower_gather(ctx: LoweringContext, eq: Equation) -> None:
    (operand, indices), (out,) = eq.inputs, eq.outputs
    dn = eq.params["dimension_numbers"]
    sizes = eq.params["slice_sizes"]
    op_dims = operand.aval.dimensions
    out_shape = out.aval.shape
    if 0 in sizes:  # the reference reads nothing: zeros
        alloc(ctx, out, zero=True)
        return
    alloc(ctx, out)
    if out.aval.size == 0:
        return
    index_type = indices.aval.element_type
    batch_out = [d for d in range(out.aval.ndim) if d not in dn.offset_dims]
    dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    kept = [d for d in range(operand.aval.ndim) if d not in dropped]  # <-> offset_dims
    with box_loops(ctx, [(0, n) for n in out.aval.dimensions], _order(out_shape, batch_out),
                   prefix="b") as bidx:
        batch = [bidx[d] for d in batch_out]  # index of the indices' batch dimensions
        starts: list[str] = []
        for d in range(operand.aval.ndim):
            hi = op_dims[d] - sizes[d]
            if d in dn.start_index_map:
                k = dn.start_index_map.index(d)
                starts.append("0" if hi == 0 else
                              clamp_start(ctx, index_type, _read_index(ctx, indices, batch, k),
                                          hi))
            elif d in dn.operand_batching_dims:
                j = dn.start_indices_batching_dims[dn.operand_batching_dims.index(d)]
                starts.append(batch[j])  # in range: the batch sizes are equal
            else:
                starts.append("0")
        with box_loops(ctx, [(0, n) for n in out.aval.dimensions],
                       _order(out_shape, dn.offset_dims), prefix="o") as oidx:
            src = list(starts)
            for k, d in enumerate(kept):
                src[d] = affine(starts[d], oidx[dn.offset_dims[k]])
            full = [bidx[d] if d in batch_out else oidx[d] for d in range(out.aval.ndim)]
            move_write(ctx, out, full, move_read(ctx, operand, src))


# -- scatter -----------------------------------------------------------------------------

def _combine_named(name: str, t: PrimitiveType):
    def combine(ctx: LoweringContext, old: list[str], new: list[str]) -> list[str]:
        a, b = old[0], new[0]
        if t is PrimitiveType.PRED:
            op = "or" if name in ("scatter_add", "scatter_max") else "and"
            return [f"({a} {op} {b})"]
        return [{"scatter_add": f"({a} + {b})", "scatter_mul": f"({a} * {b})",
                 "scatter_min": f"nan_min({a}, {b})",
                 "scatter_max": f"nan_max({a}, {b})"}[name]]
    return combine


def _emit_scatter(ctx: LoweringContext, eq: Equation, operands: list, indices, updates: list,
                  combine) -> None:
    """Copy the operands into the outputs, then apply every update window that fits."""
    outs = list(eq.outputs)
    dn = eq.params["dimension_numbers"]
    for o, x in zip(outs, operands):
        alloc(ctx, o)
        copy_value(ctx, x, o)
    upd = updates[0].aval
    op_dims = operands[0].aval.dimensions
    rank = len(op_dims)
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    kept = [d for d in range(rank) if d not in dropped]  # <-> update_window_dims
    sizes = [1] * rank
    for k, d in enumerate(kept):
        sizes[d] = upd.dimensions[dn.update_window_dims[k]]
    scatter_upd_dims = [d for d in range(upd.ndim) if d not in dn.update_window_dims]
    batch_dims = indices.aval.dimensions[:-1]
    if upd.size == 0 or any(s > n for s, n in zip(sizes, op_dims)):
        return  # nothing to apply, or no window can fit
    index_type = indices.aval.element_type
    # index vectors in row-major order: the order the reference applies them in
    with box_loops(ctx, [(0, n) for n in batch_dims], range(len(batch_dims)),
                   prefix="b") as batch:
        starts: list[str] = []
        checks: list[str] = []
        for d in range(rank):
            if d in dn.scatter_dims_to_operand_dims:
                k = dn.scatter_dims_to_operand_dims.index(d)
                s = ctx.fresh("s")
                ctx.emit(f"{s} = {index_as_int64(index_type, _read_index(ctx, indices, batch, k))}")
                checks.append(f"{s} >= 0 and {s} <= {op_dims[d] - sizes[d]}")
                starts.append(s)
            elif d in dn.operand_batching_dims:
                j = dn.scatter_indices_batching_dims[dn.operand_batching_dims.index(d)]
                starts.append(batch[j])  # in range: the batch sizes are equal
            else:
                starts.append("0")
        with ctx.block(f"if {' and '.join(checks)}:") if checks else contextlib.nullcontext():
            out_shape = outs[0].aval.shape
            with box_loops(ctx, [(0, n) for n in sizes], _order(out_shape, kept),
                           prefix="w") as widx:
                target = list(starts)
                for d in kept:
                    target[d] = affine(starts[d], widx[d])
                source = [""] * upd.ndim
                for j, d in enumerate(scatter_upd_dims):
                    source[d] = batch[j]
                for k, d in enumerate(kept):
                    source[dn.update_window_dims[k]] = widx[d]
                if combine is None:  # replace: a pure move (16-bit floats stay words)
                    for o, u in zip(outs, updates):
                        move_write(ctx, o, target, move_read(ctx, u, source))
                else:
                    _apply_combine(ctx, outs, target, updates, source, combine)


def _apply_combine(ctx: LoweringContext, outs: list, target: list[str], updates: list,
                   source: list[str], combine) -> None:
    old = []
    for o in outs:  # read every old value before any write (variadic)
        name = ctx.fresh("old")
        ctx.emit(f"{name} = {ctx.read(o, target)}")
        old.append(name)
    new = [ctx.read(u, source) for u in updates]
    for o, value in zip(outs, combine(ctx, old, new)):
        ctx.write(o, target, value)


def _lower_scatter(ctx: LoweringContext, eq: Equation) -> None:
    graph = eq.params["update_computation"]
    n = len(eq.outputs)
    args = list(eq.inputs)
    operands, indices, updates, captured = args[:n], args[n], args[n + 1:2 * n + 1], \
        args[2 * n + 1:]
    for c in captured:
        if c.aval.ndim:
            raise NotImplementedError("scatter: an update computation that closes over an "
                                      "array is not lowered (only scalars)")

    def apply_computation(ctx, old, new):
        return ctx.scalar_graph(graph, old + new + [ctx.read(c, []) for c in captured])
    _emit_scatter(ctx, eq, operands, indices, updates,
                  None if graph is None else apply_computation)  # None: replace


def _lower_named_scatter(ctx: LoweringContext, eq: Equation) -> None:
    operand, indices, updates = eq.inputs
    combine = _combine_named(eq.primitive.name, operand.aval.element_type)
    _emit_scatter(ctx, eq, [operand], indices, [updates], combine)


lowerings[indexing.gather_p] = _lower_gather
lowerings[indexing.scatter_p] = _lower_scatter
for _p in indexing.NAMED_SCATTER_PRIMITIVES.values():
    lowerings[_p] = _lower_named_scatter
