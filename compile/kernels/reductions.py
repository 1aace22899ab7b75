"""Lowering of reduce_sum: one pass over the operand in its physical order,
accumulating into the (zero-initialised) result."""
from __future__ import annotations

from primitives import reductions
from tracer.graph import Equation
from tracer.shapes import PrimitiveType

from ..codegen import LoweringContext, lowerings


def _lower_reduce_sum(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    axes = eq.params["axes"]
    ctx.alloc(out, zero=True)
    with ctx.loops(x.aval.shape) as idx:
        kept = [i for d, i in enumerate(idx) if d not in axes]
        target = ctx.read(out, kept)
        op = "|" if x.aval.element_type is PrimitiveType.PRED else "+"
        ctx.emit(f"{target} = {target} {op} {ctx.read(x, idx)}")


lowerings[reductions.reduce_sum_p] = _lower_reduce_sum
