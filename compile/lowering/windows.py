"""Lowerings of the windowed reductions: ReduceWindow (variadic, base and
window dilation, padding), its shortcuts ``reduce_window_sum``/``_max``/
``_min``, SelectAndScatter and ``select_and_scatter_add``.

One loop nest runs over the result (in its physical order); inside it, one
loop per window dimension maps the window position ``k`` to the padded,
dilated base coordinate ``c = o * stride + k * window_dilation - pad_low``
and skips it (``continue``) when it falls in the padding or in a hole of
the base dilation, exactly as the reference does: padding and holes are no
elements, so the init value takes part once per window.  Bounds checks are
only emitted where the window can reach outside the base.

``reduce_window`` applies its computation in the reference's order (window
positions in row-major order); the shortcuts, associative and commutative,
walk the window in the operand's physical order and accumulate in
registers (f32 for 16-bit floats, rounded once).

SelectAndScatter scans each window in row-major order, keeping the current
pick while ``select(current, candidate)`` holds, then applies
``scatter(result[pick], source[w])`` for the windows in row-major order
(``select_and_scatter_add``, commutative, in the source's physical order,
into an f32 scratch for 16-bit floats).  A window of padding only selects
nothing.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Iterator, Sequence

import numpy as np

from numxla.primitives import windows as win
from numxla.primitives.reductions import apply_computation
from numxla.tracer.core import AbstractValue
from numxla.tracer.graph import Equation, Literal, Var
from numxla.tracer.shapes import PrimitiveType as PT, Shape

from ..codegen import LoweringContext
from ..layout_index import loop_order
from ..registry import fusion_consumers, lowerings, rereading_consumers
from .reductions import (HALF_TYPES, cast, identity_text, loops_in_order, monoid_text,
                         read_scalar, scratch_buffer)

_SHORTCUT_OPS = {"reduce_window_sum": ("add", "reduce_sum"),
                 "reduce_window_max": ("max", "reduce_max"),
                 "reduce_window_min": ("min", "reduce_min")}


def _dilated(size: int, dilation: int) -> int:
    return 0 if size == 0 else (size - 1) * dilation + 1


def _affine(terms: Sequence[tuple[str, int]], const: int) -> str:
    """``sum(var * k) + const`` as source text, folding ones and zeros."""
    parts = [v if k == 1 else f"{v} * {k}" for v, k in terms if k != 0]
    if const or not parts:
        parts.append(str(const))
    return " + ".join(parts).replace("+ -", "- ")


@contextlib.contextmanager
def window_loops(ctx: LoweringContext, base: Shape, out_dims: Sequence[int],
                 out_index: Sequence[str], order: Sequence[int], *, window_dimensions,
                 window_strides, padding, base_dilation, window_dilation
                 ) -> Iterator[list[str]]:
    """Loops over the window positions of the result element ``out_index``
    (window dimensions nested in ``order``), skipping padding and holes;
    yields the operand index (one expression per dimension) of each real
    element."""
    rank = len(base.dimensions)
    operand_index = [""] * rank
    with contextlib.ExitStack() as stack:
        for d in order:
            k, c = ctx.fresh("k"), ctx.fresh("c")
            stride, wdil, bdil = window_strides[d], window_dilation[d], base_dilation[d]
            low = padding[d][0]
            extent = _dilated(base.dimensions[d], bdil)
            highest = (out_dims[d] - 1) * stride + (window_dimensions[d] - 1) * wdil - low
            below, above = low > 0, highest >= extent  # can the window leave the base?
            checks = []
            if below:
                checks.append(f"{c} < 0")
            if above:
                checks.append(f"{c} >= {extent}")
            if bdil > 1:
                checks.append(f"{c} % {bdil} != 0")
            if window_dimensions[d] == 1 and not checks:  # position 0: no loop to continue
                k = "0"
            else:
                stack.enter_context(ctx.block(f"for {k} in range({window_dimensions[d]}):"))
            ctx.emit(f"{c} = {_affine([(out_index[d], stride), (k, wdil)], -low)}")
            if checks:
                with ctx.block(f"if {' or '.join(checks)}:"):
                    ctx.emit("continue")
            operand_index[d] = c if bdil == 1 else f"({c} // {bdil})"
        yield operand_index


def _window_params(eq: Equation, rank: int) -> dict:
    params = {k: eq.params[k] for k in ("window_dimensions", "window_strides", "padding")}
    params["base_dilation"] = eq.params.get("base_dilation") or (1,) * rank
    params["window_dilation"] = eq.params.get("window_dilation") or (1,) * rank
    return params


# --------------------------------------------------------------------------
# ReduceWindow
# --------------------------------------------------------------------------

def _scan_is_fold(computation, init: Var | Literal, operand: AbstractValue) -> bool:
    """A cumulative ``reduce_window`` may run as a scan when its computation
    is one commutative monoid op and ``f(init, init) == init`` (the windows'
    padding then changes nothing): the reference does the same."""
    if not isinstance(init, Literal) or win.scanned_monoid(computation) is None or \
            operand.element_type in HALF_TYPES:
        return False
    value = np.asarray(init.value, operand.dtype)
    (twice,) = apply_computation(computation, [value, value])
    t = operand.element_type
    return bool(np.array_equal(twice, value, equal_nan=t.is_floating or t.is_complex))


def _lower_reduce_window(ctx: LoweringContext, eq: Equation) -> None:
    computation = eq.params["computation"]
    n = len(eq.outputs)
    xs, inits, extra = eq.inputs[:n], eq.inputs[n:2 * n], eq.inputs[2 * n:]
    outs = eq.outputs
    types = [x.aval.element_type for x in xs]
    base = xs[0].aval.shape
    rank = len(base.dimensions)
    window = _window_params(eq, rank)
    extra_texts = [read_scalar(ctx, a) for a in extra]
    for out in outs:
        ctx.alloc(out)
    init_texts = [cast(t, read_scalar(ctx, i)) for t, i in zip(types, inits)]
    out_shape = outs[0].aval.shape
    scan = win.scan_axis(base.dimensions, **window) if base.size and n == 1 else None
    if scan is not None and _scan_is_fold(computation, inits[0], xs[0].aval):
        def combine(previous: str | None, value: str) -> str:
            (r,) = ctx.scalar_graph(computation, [previous or init_texts[0], value,
                                                  *extra_texts])
            return cast(types[0], r)
        _emit_scan(ctx, xs[0], outs[0], scan, combine)
        return
    with ctx.loops(out_shape, prefix="o") as o:
        accs = [ctx.fresh("acc") for _ in outs]
        for acc, init in zip(accs, init_texts):
            ctx.emit(f"{acc} = {init}")
        if base.size:
            with window_loops(ctx, base, out_shape.dimensions, o, range(rank),
                              **window) as j:
                values = [ctx.read(x, j) for x in xs]
                results = ctx.scalar_graph(computation, [*accs, *values, *extra_texts])
                new = [ctx.fresh("r") for _ in outs]
                for name, t, r in zip(new, types, results):
                    ctx.emit(f"{name} = {cast(t, r)}")
                for acc, name in zip(accs, new):
                    ctx.emit(f"{acc} = {name}")
        for out, acc in zip(outs, accs):
            ctx.write(out, o, acc)


def _emit_scan(ctx: LoweringContext, x: Var, acc: Var, scan: tuple[int, bool],
               combine: Callable[[str, str], str]) -> None:
    """A cumulative window reduction in one pass: along the scan axis,
    ``acc[.., p, ..] = combine(acc[.., p -/+ 1, ..], x[.., p, ..])`` with the
    first position ``combine(None, x)``; the other loops in physical order."""
    axis, reverse = scan
    n = x.aval.dimensions[axis]
    with ctx.loops(acc.aval.shape, prefix="o") as o:
        at = list(o)
        if reverse:
            at[axis] = ctx.fresh("p")
            ctx.emit(f"{at[axis]} = {n - 1} - {o[axis]}")
        previous = list(at)
        previous[axis] = f"{at[axis]} + 1" if reverse else f"{at[axis]} - 1"
        value = ctx.read(x, at)
        with ctx.block(f"if {o[axis]} == 0:"):
            ctx.write(acc, at, combine(None, value))
        with ctx.block("else:"):
            ctx.write(acc, at, combine(ctx.read(acc, previous), value))


def _lower_shortcut(name: str):
    op, reduction = _SHORTCUT_OPS[name]

    def lower(ctx: LoweringContext, eq: Equation) -> None:
        (x,), (out,) = eq.inputs, eq.outputs
        t = x.aval.element_type
        base = x.aval.shape
        window = _window_params(eq, len(base.dimensions))
        identity = identity_text(reduction, t)
        ctx.alloc(out)
        scan = win.scan_axis(base.dimensions, **window) if base.size else None
        if scan is not None:
            # 16-bit floats accumulate in f32 and round once, as the reference
            acc = scratch_buffer(ctx, out.aval.shape, PT.F32) if t in HALF_TYPES else out
            _emit_scan(ctx, x, acc, scan, lambda previous, value: cast(
                t, monoid_text(op, t, identity if previous is None else previous, value)))
            if acc is not out:
                with ctx.loops(out.aval.shape, prefix="o") as o:
                    ctx.write(out, o, ctx.read(acc, o))
            return
        with ctx.loops(out.aval.shape, prefix="o") as o:
            acc = ctx.fresh("acc")
            ctx.emit(f"{acc} = {identity}")
            if base.size:
                with window_loops(ctx, base, out.aval.shape.dimensions, o, loop_order(base),
                                  **window) as j:
                    ctx.emit(f"{acc} = {cast(t, monoid_text(op, t, acc, ctx.read(x, j)))}")
            ctx.write(out, o, acc)
    return lower


lowerings[win.reduce_window_p] = _lower_reduce_window
for _name, _prim in win.SHORTCUT_WINDOW_PRIMITIVES.items():
    lowerings[_prim] = _lower_shortcut(_name)


# --------------------------------------------------------------------------
# SelectAndScatter
# --------------------------------------------------------------------------

def _emit_select_and_scatter(ctx: LoweringContext, eq: Equation, operand: Var, source: Var,
                             result: Var, source_order: Sequence[int],
                             select: Callable[[str, str], str],
                             scatter: Callable[[str, str], str]) -> None:
    """For each window (``source`` element, visited in ``source_order``): pick
    an element with ``select(current, candidate) -> text`` (emitting what it
    needs), then ``scatter(old, value) -> text`` it into ``result``."""
    base = operand.aval.shape
    rank = len(base.dimensions)
    t = operand.aval.element_type
    dims = source.aval.shape.dimensions
    o = [f"w{d}" for d in range(rank)]
    window = _window_params(eq, rank)
    with loops_in_order(ctx, source_order, dims, o):
        found, current = ctx.fresh("found"), ctx.fresh("cur")
        picks = [ctx.fresh("at") for _ in range(rank)]
        ctx.emit(f"{found} = False")
        ctx.emit(f"{current} = {cast(t, '0')}")
        for p in picks:
            ctx.emit(f"{p} = 0")
        with window_loops(ctx, base, dims, o, range(rank), **window) as j:
            v, take = ctx.fresh("v"), ctx.fresh("take")
            ctx.emit(f"{v} = {cast(t, ctx.read(operand, j))}")
            with ctx.block(f"if {found}:"):
                keep = select(current, v)
                ctx.emit(f"{take} = not {keep}")
            with ctx.block("else:"):
                ctx.emit(f"{take} = True")
            with ctx.block(f"if {take}:"):
                ctx.emit(f"{found} = True")
                ctx.emit(f"{current} = {v}")
                for p, jd in zip(picks, j):
                    ctx.emit(f"{p} = {jd}")
        with ctx.block(f"if {found}:"):
            new = scatter(ctx.read(result, picks), ctx.read(source, o))
            ctx.write(result, picks, cast(t, new))


def _lower_select_and_scatter(ctx: LoweringContext, eq: Equation) -> None:
    operand, source, init_value, *extra = eq.inputs
    (out,) = eq.outputs
    select_graph, scatter_graph = eq.params["select"], eq.params["scatter"]
    n_select = len(select_graph.in_avals) - 2
    select_extra = [read_scalar(ctx, a) for a in extra[:n_select]]
    scatter_extra = [read_scalar(ctx, a) for a in extra[n_select:]]
    t = operand.aval.element_type
    ctx.alloc(out)
    init = cast(t, read_scalar(ctx, init_value))
    with ctx.loops(out.aval.shape, prefix="o") as o:
        ctx.write(out, o, init)

    def select(current: str, candidate: str) -> str:
        return ctx.scalar_graph(select_graph, [current, candidate, *select_extra])[0]

    def scatter(old: str, value: str) -> str:
        return ctx.scalar_graph(scatter_graph, [old, value, *scatter_extra])[0]

    # the windows in row-major order: the reference's order of scatters
    _emit_select_and_scatter(ctx, eq, operand, source, out, range(operand.aval.ndim), select,
                             scatter)


def _lower_select_and_scatter_add(ctx: LoweringContext, eq: Equation) -> None:
    source, operand = eq.inputs
    (out,) = eq.outputs
    t = operand.aval.element_type
    symbol = {"ge": ">=", "le": "<="}[eq.params["select_prim"]]
    ctx.alloc(out)
    # 16-bit floats add in f32 and round once
    acc = scratch_buffer(ctx, out.aval.shape, PT.F32) if t in HALF_TYPES else out
    with ctx.loops(acc.aval.shape, prefix="o") as o:
        ctx.write(acc, o, cast(t, "0"))
    _emit_select_and_scatter(ctx, eq, operand, source, acc, loop_order(source.aval.shape),
                             lambda a, b: f"({a} {symbol} {b})",
                             lambda old, value: monoid_text("add", t, old, value))
    if acc is not out:
        with ctx.loops(out.aval.shape, prefix="o") as o:
            ctx.write(out, o, ctx.read(acc, o))


lowerings[win.select_and_scatter_p] = _lower_select_and_scatter
lowerings[win.select_and_scatter_add_p] = _lower_select_and_scatter_add


# --------------------------------------------------------------------------
# Fusion: every lowering above reads its operands only through ``ctx.read``
# (only at real, in-bounds elements: padding and holes are skipped first), so
# producers fuse into them (a relu into its max pool); windows may overlap,
# so only cheap producers (see compile/fusion.py).
# --------------------------------------------------------------------------

_WINDOW_PRIMITIVES = {win.reduce_window_p, *win.SHORTCUT_WINDOW_PRIMITIVES.values(),
                      win.select_and_scatter_p, win.select_and_scatter_add_p}
fusion_consumers.update(_WINDOW_PRIMITIVES)
rereading_consumers.update(_WINDOW_PRIMITIVES)
