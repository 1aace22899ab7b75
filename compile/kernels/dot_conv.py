"""Lowering of DotGeneral.

Operands are brought to the canonical forms ``lhs[batch, m, k]`` and
``rhs[batch, k, n]`` (a free reshape when the operand already has that
order in the default layout, otherwise one packing loop over the operand in
its physical order), then each batch is one BLAS ``np.dot`` for float and
complex types, or a plain ``i-p-j`` loop for integers and pred.  The result
``[batch, m, n]`` is the row-major order of DotGeneral's result dimensions.
"""
from __future__ import annotations

import math

from primitives import dot_conv
from tracer.graph import Equation, Var
from tracer.shapes import Layout

from ..codegen import LoweringContext, dtype_name, lowerings


def _flat(idx: list[str], dims: tuple[int, ...], group: tuple[int, ...]) -> str:
    """Row-major flat index over the logical dimensions in ``group``."""
    terms, stride = [], 1
    for d in reversed(group):
        terms.append(f"{idx[d]} * {stride}" if stride != 1 else idx[d])
        stride *= dims[d]
    return " + ".join(reversed(terms)) or "0"


def _canonical(ctx: LoweringContext, x: Var, groups: tuple[tuple[int, ...], ...]) -> str:
    """A 3-D C-contiguous array of ``x`` with its dimensions grouped as ``groups``."""
    dims = x.aval.dimensions
    sizes = tuple(math.prod(dims[d] for d in g) for g in groups)
    order = tuple(d for g in groups for d in g)
    if order == tuple(range(len(dims))) and x.aval.shape.layout == Layout.default(len(dims)):
        return f"{ctx.name(x)}.reshape({sizes})"
    name = ctx.fresh("pack")
    ctx.emit(f"{name} = np.empty({sizes}, {dtype_name(x.aval.element_type)})")
    with ctx.loops(x.aval.shape) as idx:
        target = ", ".join(_flat(idx, dims, g) for g in groups)
        ctx.emit(f"{name}[{target}] = {ctx.read(x, idx)}")
    return name


def _lower_dot_general(ctx: LoweringContext, eq: Equation) -> None:
    lhs, rhs = eq.inputs
    (out,) = eq.outputs
    (lc, rc), (lb, rb) = eq.params["dimension_numbers"]
    lfree = tuple(d for d in range(lhs.aval.ndim) if d not in lc and d not in lb)
    rfree = tuple(d for d in range(rhs.aval.ndim) if d not in rc and d not in rb)
    a = _canonical(ctx, lhs, (lb, lfree, lc))
    b = _canonical(ctx, rhs, (rb, rc, rfree))
    nb = math.prod(lhs.aval.dimensions[d] for d in lb)
    m = math.prod(lhs.aval.dimensions[d] for d in lfree)
    n = math.prod(rhs.aval.dimensions[d] for d in rfree)
    k = math.prod(lhs.aval.dimensions[d] for d in lc)
    out_t = out.aval.element_type
    acc_is_blas = (out_t.is_floating or out_t.is_complex) and \
        lhs.aval.element_type is out_t
    name = ctx.alloc(out, zero=not acc_is_blas)
    c = f"{name}.reshape(({nb}, {m}, {n}))"
    if acc_is_blas and k > 0:
        cv, av, bv = ctx.fresh("cv"), ctx.fresh("av"), ctx.fresh("bv")
        ctx.emit(f"{cv} = {c}")
        ctx.emit(f"{av} = {a}")
        ctx.emit(f"{bv} = {b}")
        with ctx.block(f"for bi in range({nb}):"):
            ctx.emit(f"np.dot({av}[bi], {bv}[bi], {cv}[bi])")
        return
    if acc_is_blas:  # k == 0: the empty sum
        ctx.emit(f"{name}[:] = 0")
        return
    cv, av, bv = ctx.fresh("cv"), ctx.fresh("av"), ctx.fresh("bv")
    ctx.emit(f"{cv} = {c}")
    ctx.emit(f"{av} = {a}")
    ctx.emit(f"{bv} = {b}")
    op = "|" if out_t.name == "PRED" else "+"
    mul = "&" if out_t.name == "PRED" else "*"
    conv = dtype_name(out_t)
    with ctx.block(f"for bi in range({nb}):"):
        with ctx.block(f"for i in range({m}):"):
            with ctx.block(f"for p in range({k}):"):
                ctx.emit(f"x = {conv}({av}[bi, i, p])")
                with ctx.block(f"for j in range({n}):"):
                    ctx.emit(f"{cv}[bi, i, j] = {cv}[bi, i, j] {op} x {mul} {conv}({bv}[bi, p, j])")


lowerings[dot_conv.dot_general_p] = _lower_dot_general
