"""Bounded dynamic dimensions in compiled code (XLA's SetDimensionSize).

A value with dynamic dimensions is its buffer at the *bounds'* shape, zero
past its run-time sizes, plus one run-time size per dimension, an int64
variable of the generated function (:meth:`LoweringContext.sizes_of`; static
dimensions are their bound).  That is what the reference semantics define
(``tracer.core``: an op runs on operands cut to their run-time sizes, and
its result is zero-padded to its bounds), kept here by:

* ``set_dimension_size``: the run-time size is the size operand clamped to
  ``[0, bound]``; elements past it are zeroed;
* ``get_dimension_size``: reads the run-time size;
* element-wise ops: computed over the bounds, the result's sizes the
  smallest of the operands', then zeroed past them;
* ``broadcast_in_dim``: operand dimensions carry their sizes over;
* the shortcut reductions (sum, product, max, min, and, or, xor): the
  reduced loops stop at the run-time sizes.

Any other op given a dynamic operand is refused at compile time, naming it
(the function still runs eagerly).
"""
from __future__ import annotations

from typing import Callable

from numxla.primitives import reductions as red
from numxla.primitives import shape_ops
from numxla.tracer.graph import Equation, Literal, Var

from ..codegen import LoweringContext
from ..registry import dynamic_lowerings, lowerings
from .elementwise import raw_exprs
from .reductions import cast, identity_text, monoid_text
from .shape_ops import box_loops, lower_set_dimension_size, move_write, zero_word

__all__ = ["zero_past_sizes"]

DynamicLowering = Callable[[LoweringContext, Equation], None]


def zero_past_sizes(ctx: LoweringContext, var: Var) -> None:
    """Zero ``var``'s elements at or past its run-time size in any dimension."""
    shape = var.aval.shape
    sizes = ctx.sizes_of(var)
    zero = zero_word(shape.element_type)
    order = list(reversed(shape.layout.minor_to_major))
    for d, bound in enumerate(shape.dimensions):
        if sizes[d] == str(bound):
            continue
        bounds = [(0, b) for b in shape.dimensions]
        bounds[d] = (sizes[d], shape.dimensions[d])
        with box_loops(ctx, bounds, order) as idx:
            move_write(ctx, var, idx, zero)


def _set_dimension_size(ctx: LoweringContext, eq: Equation) -> None:
    (x, _), (out,) = eq.inputs, eq.outputs
    dim = eq.params["dimension"]
    n = lower_set_dimension_size(ctx, eq)    # copies up to the size, zeroes the rest
    sizes = ctx.sizes_of(x)
    sizes[dim] = n
    ctx.set_sizes(out, sizes)
    zero_past_sizes(ctx, out)            # the operand's own padding, in other dimensions


def _get_dimension_size(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    ctx.alloc(out)
    ctx.write(out, [], f"np.int32({ctx.sizes_of(x)[eq.params['dimension']]})")


def _elementwise(ctx: LoweringContext, eq: Equation) -> None:
    (out,) = eq.outputs
    lowerings[eq.primitive](ctx, eq)
    rank = out.aval.ndim
    operand_sizes = [ctx.sizes_of(a) for a in eq.inputs
                     if not isinstance(a, Literal) and a.aval.ndim == rank]
    sizes = []
    for d in range(rank):
        candidates = sorted({s[d] for s in operand_sizes})
        if len(candidates) == 1:
            sizes.append(candidates[0])
        else:
            n = ctx.fresh("n")
            ctx.emit(f"{n} = min({', '.join(candidates)})")
            sizes.append(n)
    ctx.set_sizes(out, sizes)
    zero_past_sizes(ctx, out)


def _broadcast_in_dim(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    lowerings[eq.primitive](ctx, eq)
    sizes = [str(b) for b in out.aval.dimensions]
    for i, d in enumerate(eq.params["broadcast_dimensions"]):
        if x.aval.dimensions[i] != 1 or x.aval.shape.dynamic_dimensions[i]:
            sizes[d] = ctx.sizes_of(x)[i]
    ctx.set_sizes(out, sizes)
    zero_past_sizes(ctx, out)


def _shortcut(name: str) -> DynamicLowering:
    op = red.SHORTCUT_REDUCTIONS[name][2]

    def lower(ctx: LoweringContext, eq: Equation) -> None:
        """One accumulator per result element; the loops over the reduced
        dimensions stop at the operand's run-time sizes."""
        (x,), (out,) = eq.inputs, eq.outputs
        axes = eq.params["axes"]
        t = x.aval.element_type
        xs = ctx.sizes_of(x)
        ctx.alloc(out, zero=True)
        kept = [d for d in range(x.aval.ndim) if d not in axes]
        out_sizes = [xs[d] for d in kept]
        ctx.set_sizes(out, out_sizes)
        outer = box_loops(ctx, [(0, s) for s in out_sizes], list(range(len(kept))), prefix="o")
        with outer as o:
            acc = ctx.fresh("acc")
            ctx.emit(f"{acc} = {identity_text(name, t)}")
            with box_loops(ctx, [(0, xs[d]) for d in axes], list(range(len(axes))),
                           prefix="r") as r:
                index = [""] * x.aval.ndim
                for d, i in zip(kept, o):
                    index[d] = i
                for d, i in zip(axes, r):
                    index[d] = i
                ctx.emit(f"{acc} = {cast(t, monoid_text(op, t, acc, ctx.read(x, index)))}")
            ctx.write(out, o, acc)
    return lower


dynamic_lowerings.update({
    shape_ops.set_dimension_size_p: _set_dimension_size,
    shape_ops.get_dimension_size_p: _get_dimension_size,
    shape_ops.broadcast_in_dim_p: _broadcast_in_dim,
})
for _prim in raw_exprs:
    dynamic_lowerings[_prim] = _elementwise
for _name, _prim in red.SHORTCUT_PRIMITIVES.items():
    dynamic_lowerings[_prim] = _shortcut(_name)
