"""Lowerings of BroadcastInDim, Reshape and Transpose: index remaps."""
from __future__ import annotations

import numpy as np

from primitives import shape_ops
from tracer.graph import Equation, Literal
from tracer.shapes import Layout

from ..codegen import LoweringContext, lowerings


def _lower_broadcast_in_dim(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    dims = eq.params["broadcast_dimensions"]
    ctx.alloc(out)
    with ctx.loops(out.aval.shape) as idx:
        src = ["0" if x.aval.dimensions[i] == 1 else idx[d] for i, d in enumerate(dims)]
        ctx.write(out, idx, ctx.read(x, src))


def _lower_transpose(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    perm = eq.params["permutation"]
    ctx.alloc(out)
    with ctx.loops(out.aval.shape) as idx:
        src = [""] * len(perm)
        for i, p in enumerate(perm):
            src[p] = idx[i]
        ctx.write(out, idx, ctx.read(x, src))


def _is_default(aval) -> bool:
    layout = aval.shape.layout
    return layout == Layout.default(aval.ndim)


def _lower_reshape(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    if not isinstance(x, Literal) and _is_default(x.aval) and _is_default(out.aval):
        ctx.alias(out, x)  # row-major to row-major: a bitcast
        return
    ctx.alloc(out)
    in_dims = x.aval.dimensions
    with ctx.loops(out.aval.shape) as idx:
        flat = ctx.fresh("flat")
        strides = np.cumprod((1,) + out.aval.dimensions[::-1])[::-1][1:]
        terms = " + ".join(f"{i} * {int(s)}" for i, s in zip(idx, strides))
        ctx.emit(f"{flat} = {terms or '0'}")
        src = []
        in_strides = np.cumprod((1,) + in_dims[::-1])[::-1][1:]
        for d, s in zip(in_dims, in_strides):
            src.append(f"(({flat} // {int(s)}) % {d})")
        ctx.write(out, idx, ctx.read(x, src))


lowerings[shape_ops.broadcast_in_dim_p] = _lower_broadcast_in_dim
lowerings[shape_ops.transpose_p] = _lower_transpose
lowerings[shape_ops.reshape_p] = _lower_reshape
