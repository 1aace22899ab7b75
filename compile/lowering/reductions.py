"""Lowerings of the reductions: Reduce (variadic, with its computation
inlined as scalar code), the shortcut reductions (``reduce_sum``,
``reduce_prod``, ``reduce_max``, ``reduce_min``, ``reduce_and``,
``reduce_or``, ``reduce_xor``) and ``argmax``/``argmin``.

Every reduction makes one pass over its operand, with the loops nested in
the operand's physical order (innermost on its most-minor dimension), and
accumulates into the result:

* when the most-minor loops are all reduced dimensions, in scalar
  accumulators (registers) written out once per result element;
* otherwise in the result buffer itself (or a scratch buffer of the
  compute type), read, combined and written back per element.

The shortcuts are associative and commutative, so any order is theirs;
``reduce`` applies its computation in the reference's order,
``f(...f(f(init, x_0), x_1)..., x_{n-1})`` over the reduced elements in
row-major order: its reduced dimensions keep their layout's loop slots but
are visited in increasing dimension order.  ``argmax``/``argmin`` keep the
first extreme index along the axis, the first NaN if there is one.

F16 and BF16 (uint16 words in buffers) are read as f32: the shortcuts and
argmax/argmin compute in f32 and round once, as the reference does; a
``reduce`` computation's scalar code rounds each of its results to its
16-bit type (the element-wise scalar expressions do), so it rounds after
every step, as the reference does.

The helpers here (loops in a chosen order, scratch buffers, per-step casts)
are shared with the windowed reductions and Sort.
"""
from __future__ import annotations

import contextlib
import dataclasses
from typing import Iterator, Sequence

import numba
import numpy as np

from numxla.primitives import elementwise as ew
from numxla.primitives import reductions as red
from numxla.tracer.core import AbstractValue
from numxla.tracer.graph import Equation, Literal, Var
from numxla.tracer.shapes import PrimitiveType as PT, Shape

from ..codegen import LoweringContext, dtype_name, literal_text
from ..layout_index import loop_order
from ..registry import fusion_consumers, lowerings

__all__ = ["loops_in_order", "scratch_buffer", "cast", "read_scalar", "identity_text",
           "monoid_text", "HALF_TYPES"]

HALF_TYPES = (PT.F16, PT.BF16)


# --------------------------------------------------------------------------
# helpers shared by the reduction-like lowerings
# --------------------------------------------------------------------------

@contextlib.contextmanager
def loops_in_order(ctx: LoweringContext, dims: Sequence[int], sizes: Sequence[int],
                   index: Sequence[str]) -> Iterator[None]:
    """``for index[d] in range(sizes[d])`` for each ``d`` of ``dims``, outermost
    first (``index[d] = 0`` where ``sizes[d]`` is 1: no loop)."""
    with contextlib.ExitStack() as stack:
        for d in dims:
            if sizes[d] == 1:
                ctx.emit(f"{index[d]} = 0")
            else:
                stack.enter_context(ctx.block(f"for {index[d]} in range({sizes[d]}):"))
        yield


def scratch_buffer(ctx: LoweringContext, like: Shape, element_type: PT, *,
                   zero: bool = False) -> Var:
    """A fresh buffer with ``like``'s dimensions and layout holding ``element_type``."""
    var = Var(AbstractValue(dataclasses.replace(like, element_type=element_type)))
    ctx.alloc(var, zero=zero)
    return var


def compute_type(t: PT) -> PT:
    """The type a kernel computes ``t`` in (16-bit floats in f32)."""
    return PT.F32 if t in HALF_TYPES else t


def cast(t: PT, text: str) -> str:
    """``text`` converted to ``t``'s compute type, so that a variable keeps one
    Numba type (and integers wrap at their width) across loop iterations."""
    return f"{dtype_name(compute_type(t))}({text})"


def accumulator_type(op: str, t: PT) -> PT:
    """The type a shortcut reduction accumulates ``t`` in where its chain of
    combinations is sequential: f32 sums in f64, as NumPy's pairwise sum is
    accurate (a chain of a million f32 additions drifts by 1e-3), the rest in
    their compute type."""
    return PT.F64 if op == "add" and t is PT.F32 else compute_type(t)


def read_scalar(ctx: LoweringContext, atom: Var | Literal) -> str:
    """A rank-0 operand (an init value, a captured scalar) as source text."""
    if atom.aval.ndim:
        raise NotImplementedError("computations capturing non-scalar values are not lowered")
    return ctx.read(atom, [])


def identity_text(name: str, t: PT) -> str:
    """The identity of the shortcut reduction ``name`` (``reduce_sum``...) for ``t``."""
    dtype = np.dtype(np.float32) if t in HALF_TYPES else t.numpy_dtype
    value = red.SHORTCUT_REDUCTIONS[name][3](dtype)
    return literal_text(np.array(value).astype(dtype), compute_type(t))


def monoid_text(op: str, t: PT, a: str, b: str) -> str:
    """``op`` (an elementwise op name: add, mul, max, min, and, or, xor) on two
    scalars of type ``t``, with XLA's semantics (NaN-propagating max/min)."""
    if t is PT.PRED:
        op = {"add": "or", "mul": "and", "max": "or", "min": "and"}.get(op, op)
    if op in ("max", "min"):
        return f"nan_{op}({a}, {b})"
    symbol = {"add": "+", "mul": "*", "and": "&", "or": "|", "xor": "^"}[op]
    return f"({a} {symbol} {b})"


def _reduction_order(shape: Shape, axes: Sequence[int], *, row_major_reduced: bool
                     ) -> tuple[list[int], list[int]]:
    """Loop order over ``shape`` (major to minor, its physical order), split
    into (outer, inner): ``inner`` is the longest run of reduced dimensions
    at the minor end, accumulated in registers.  ``row_major_reduced`` visits
    the reduced dimensions in increasing order (in their layout's slots)."""
    order = list(loop_order(shape))
    if row_major_reduced:
        reduced = iter(sorted(axes))
        order = [next(reduced) if d in axes else d for d in order]
    split = len(order)
    while split > 0 and order[split - 1] in axes:
        split -= 1
    return order[:split], order[split:]


# --------------------------------------------------------------------------
# the shortcut reductions
# --------------------------------------------------------------------------

_LANES = 64
_LANE_OPS = ("add", "mul", "max", "min")


def _emit_lanes(ctx: LoweringContext, x: Var, idx: list[str], inner: Sequence[int], op: str,
                t: PT, identity: str, acc: str, lanes: str) -> None:
    """The inner (reduced) loops, the most-minor one split into blocks of
    ``_LANES`` accumulated lane-wise into ``lanes`` (of ``t``); the tail and
    then the lanes (pairwise) are folded into ``acc``."""
    acc_type = dtype_name(accumulator_type(op, t))
    minor = inner[-1]
    size = x.aval.dimensions[minor]
    blocks = size // _LANES
    lane, block = ctx.fresh("l"), ctx.fresh("b")
    with ctx.block(f"for {lane} in range({_LANES}):"):
        ctx.emit(f"{lanes}[{lane}] = {identity}")
    with loops_in_order(ctx, inner[:-1], x.aval.dimensions, idx):
        with ctx.block(f"for {block} in range({blocks}):"):
            with ctx.block(f"for {lane} in range({_LANES}):"):
                at = list(idx)
                at[minor] = f"{block} * {_LANES} + {lane}"
                ctx.emit(f"{lanes}[{lane}] = "
                         f"{monoid_text(op, t, f'{lanes}[{lane}]', ctx.read(x, at))}")
        if size % _LANES:
            with ctx.block(f"for {idx[minor]} in range({blocks * _LANES}, {size}):"):
                ctx.emit(f"{acc} = {acc_type}({monoid_text(op, t, acc, ctx.read(x, idx))})")
    # fold the lanes pairwise (vectorised halvings), not in one latency-bound chain
    width = _LANES // 2
    while width >= 1:
        with ctx.block(f"for {lane} in range({width}):"):
            ctx.emit(f"{lanes}[{lane}] = "
                     f"{monoid_text(op, t, f'{lanes}[{lane}]', f'{lanes}[{lane} + {width}]')}")
        width //= 2
    ctx.emit(f"{acc} = {acc_type}({monoid_text(op, t, acc, f'{lanes}[0]')})")


# Large reductions run on threads: chunks of a kept dimension (the outermost
# loop, or the outermost kept loop when a reduced one is outside it) in a
# prange, one contiguous chunk per thread (measured on 2 cores, 2048^2 f32:
# more, smaller chunks were slower where the chunks are column blocks).
_PARALLEL_MIN_ELEMENTS = 1 << 21
_CHUNKS = max(2, numba.config.NUMBA_NUM_THREADS)
_UNROLL = 4  # a power of two


def _parallel_split(shape: Shape, axes: Sequence[int], outer: Sequence[int]) -> int | None:
    """The kept dimension whose loop is split into prange chunks, if any."""
    if shape.size < _PARALLEL_MIN_ELEMENTS:
        return None
    kept = [d for d in outer if d not in axes]
    if not kept or shape.dimensions[kept[0]] < 2 * _CHUNKS:
        return None
    return kept[0]


def _lower_shortcut(name: str):
    op = red.SHORTCUT_REDUCTIONS[name][2]

    def lower(ctx: LoweringContext, eq: Equation) -> None:
        (x,), (out,) = eq.inputs, eq.outputs
        axes = eq.params["axes"]
        t = x.aval.element_type
        shape = x.aval.shape
        idx = [ctx.index_name("i", d) for d in range(len(shape.dimensions))]
        kept = [i for d, i in enumerate(idx) if d not in axes]
        outer, inner = _reduction_order(shape, axes, row_major_reduced=False)
        identity = identity_text(name, t)
        ctx.alloc(out)
        if shape.size == 0:  # nothing to reduce: the identity everywhere
            with ctx.loops(out.aval.shape, prefix="o") as o:
                ctx.write(out, o, identity)
            return
        reduced_outside = any(d in axes for d in outer)
        acc_type = accumulator_type(op, t)
        acc_var = out
        if reduced_outside or not inner:
            # accumulate in memory: the result, or a scratch buffer of the
            # accumulator type (f32 for 16-bit floats, f64 for f32 sums)
            if acc_type is not t:
                acc_var = scratch_buffer(ctx, out.aval.shape, acc_type)
            with ctx.loops(out.aval.shape, prefix="o") as o:
                ctx.write(acc_var, o, identity)
        minor = inner[-1] if inner else None
        lanes = None
        if inner and op in _LANE_OPS and (t.is_floating) and \
                shape.dimensions[minor] >= 2 * _LANES:
            lanes = ctx.fresh("lanes")
        split = _parallel_split(shape, axes, outer)
        with contextlib.ExitStack() as stack:
            if split is not None:
                # each chunk of the split (kept) dimension writes its own result
                # elements: chunks run on threads, each with its own lanes
                chunk, ck, n = ctx.fresh("chunk"), ctx.fresh("ck"), shape.dimensions[split]
                stack.enter_context(ctx.block(f"for {chunk} in prange({_CHUNKS}):"))
                ctx.parallel = True
                # the prange index is unsigned (int arithmetic on it would be
                # float) and of unknown range: clamped, LLVM knows the indices
                # are non-negative (no wraparound selects, no gathers)
                ctx.emit(f"{ck} = min(max(np.int64({chunk}), 0), {_CHUNKS - 1})")
            if lanes is not None:
                # float sums and maxima are latency-bound chains: accumulate in
                # _LANES independent lanes (vectorised), combined at the end
                ctx.emit(f"{lanes} = empty_buf({_LANES}, {dtype_name(t)})")

            def bounds(d: int) -> str:
                return f"{ck} * {n} // {_CHUNKS}, ({ck} + 1) * {n} // {_CHUNKS}" \
                    if d == split else str(shape.dimensions[d])

            # accumulating in memory, a large reduction combines _UNROLL
            # elements of the reduced loop around the most-minor one before
            # each read-modify-write of the accumulator
            unroll = split is not None and not inner and len(outer) >= 2 and \
                outer[-2] in axes and shape.dimensions[outer[-2]] >= _UNROLL
            for d in (outer[:-2] if unroll else outer):
                stack.enter_context(ctx.block(f"for {idx[d]} in range({bounds(d)}):"))
            if unroll:
                r, m = outer[-2], outer[-1]
                size, rb = shape.dimensions[r], ctx.fresh("rb")
                with ctx.block(f"for {rb} in range({size // _UNROLL}):"):
                    with ctx.block(f"for {idx[m]} in range({bounds(m)}):"):
                        values = []
                        for u in range(_UNROLL):
                            at = list(idx)
                            at[r] = f"{rb} * {_UNROLL} + {u}"
                            values.append(ctx.read(x, at))
                        while len(values) > 1:
                            values = [monoid_text(op, t, a, b)
                                      for a, b in zip(values[::2], values[1::2])]
                        target = ctx.read(acc_var, kept)
                        ctx.write(acc_var, kept, monoid_text(op, t, target, values[0]))
                if size % _UNROLL:
                    with ctx.block(f"for {idx[r]} in range({size - size % _UNROLL}, {size}):"):
                        with ctx.block(f"for {idx[m]} in range({bounds(m)}):"):
                            target = ctx.read(acc_var, kept)
                            ctx.write(acc_var, kept,
                                      monoid_text(op, t, target, ctx.read(x, idx)))
            elif inner:
                acc = ctx.fresh("acc")
                start = ctx.read(acc_var, kept) if reduced_outside else identity
                ctx.emit(f"{acc} = {dtype_name(acc_type)}({start})")
                if lanes is None:
                    with loops_in_order(ctx, inner, shape.dimensions, idx):
                        combined = monoid_text(op, t, acc, ctx.read(x, idx))
                        ctx.emit(f"{acc} = {dtype_name(acc_type)}({combined})")
                else:
                    _emit_lanes(ctx, x, idx, inner, op, t, identity, acc, lanes)
                ctx.write(acc_var, kept, acc)
            else:
                target = ctx.read(acc_var, kept)
                ctx.write(acc_var, kept, monoid_text(op, t, target, ctx.read(x, idx)))
        if acc_var is not out:
            with ctx.loops(out.aval.shape, prefix="o") as o:
                ctx.write(out, o, ctx.read(acc_var, o))
    return lower


for _name, _prim in red.SHORTCUT_PRIMITIVES.items():
    lowerings[_prim] = _lower_shortcut(_name)
    fusion_consumers.add(_prim)  # each operand element is read once: producers fuse in


# --------------------------------------------------------------------------
# ArgMax / ArgMin
# --------------------------------------------------------------------------

def _lower_arg(better: str):
    """``better``: the comparison making a value the new extreme (``>`` or ``<``)."""

    def lower(ctx: LoweringContext, eq: Equation) -> None:
        (x,), (out,) = eq.inputs, eq.outputs
        (axis,) = eq.params["axes"]
        index_type: PT = eq.params["index_dtype"]
        t = x.aval.element_type
        shape = x.aval.shape
        idx = [ctx.index_name("i", d) for d in range(len(shape.dimensions))]
        kept = [i for d, i in enumerate(idx) if d != axis]
        outer, inner = _reduction_order(shape, (axis,), row_major_reduced=True)
        ctx.alloc(out)

        def update(best: str, v: str, set_best: str, set_index: str) -> None:
            # the first NaN wins, then the first strictly better value
            with ctx.block(f"if {best} == {best} and ({v} {better} {best} or {v} != {v}):"):
                ctx.emit(set_best)
                ctx.emit(set_index)

        if inner:  # the axis is the most-minor loop: registers
            with loops_in_order(ctx, outer, shape.dimensions, idx):
                best, at = ctx.fresh("best"), ctx.fresh("at")
                first = list(idx)
                first[axis] = "0"
                ctx.emit(f"{best} = {cast(t, ctx.read(x, first))}")
                ctx.emit(f"{at} = 0")
                with loops_in_order(ctx, inner, shape.dimensions, idx):
                    v = ctx.fresh("v")
                    ctx.emit(f"{v} = {cast(t, ctx.read(x, idx))}")
                    update(best, v, f"{best} = {v}", f"{at} = {idx[axis]}")
                ctx.write(out, kept, f"{dtype_name(index_type)}({at})")
            return
        # the best values so far in a scratch buffer shaped like the result
        best_var = scratch_buffer(ctx, out.aval.shape, compute_type(t))
        with ctx.loops(out.aval.shape, prefix="o") as o:
            first = list(o)
            first.insert(axis, "0")
            ctx.write(best_var, o, ctx.read(x, first))
            ctx.write(out, o, f"{dtype_name(index_type)}(0)")
        with loops_in_order(ctx, outer, shape.dimensions, idx):
            v, best = ctx.fresh("v"), ctx.fresh("best")
            ctx.emit(f"{v} = {cast(t, ctx.read(x, idx))}")
            ctx.emit(f"{best} = {ctx.read(best_var, kept)}")
            with ctx.block(f"if {best} == {best} and ({v} {better} {best} or {v} != {v}):"):
                ctx.write(best_var, kept, v)
                ctx.write(out, kept, f"{dtype_name(index_type)}({idx[axis]})")
    return lower


lowerings[red.argmax_p] = _lower_arg(">")
lowerings[red.argmin_p] = _lower_arg("<")


# --------------------------------------------------------------------------
# Reduce
# --------------------------------------------------------------------------

def _lower_reduce(ctx: LoweringContext, eq: Equation) -> None:
    computation = eq.params["computation"]
    axes = eq.params["dimensions"]
    n = len(eq.outputs)
    xs, inits, extra = eq.inputs[:n], eq.inputs[n:2 * n], eq.inputs[2 * n:]
    outs = eq.outputs
    types = [x.aval.element_type for x in xs]
    shape = xs[0].aval.shape
    idx = [ctx.index_name("i", d) for d in range(len(shape.dimensions))]
    kept = [i for d, i in enumerate(idx) if d not in axes]
    outer, inner = _reduction_order(shape, axes, row_major_reduced=True)
    extra_texts = [read_scalar(ctx, a) for a in extra]
    for out in outs:
        ctx.alloc(out)
    init_texts = [cast(t, read_scalar(ctx, i)) for t, i in zip(types, inits)]
    reduced_outside = any(d in axes for d in outer)
    # the results accumulate (or start) in memory; over no elements, they are the inits
    if not inner or reduced_outside or shape.size == 0:
        with ctx.loops(outs[0].aval.shape, prefix="o") as o:
            for out, init in zip(outs, init_texts):
                ctx.write(out, o, init)
    if shape.size == 0:
        return
    # an f32 sum (a computation that is one add) accumulates in registers in
    # f64, as the shortcut does: a chain of f32 additions drifts
    wide = n == 1 and types[0] is PT.F32 and red.single_binary_op(computation) is ew.add_p
    acc_types = [PT.F64] if wide else types
    with loops_in_order(ctx, outer, shape.dimensions, idx):
        if inner:
            accs = [ctx.fresh("acc") for _ in outs]
            for acc, out, t, init in zip(accs, outs, acc_types, init_texts):
                start = cast(t, ctx.read(out, kept) if reduced_outside else init)
                ctx.emit(f"{acc} = {start}")
            with loops_in_order(ctx, inner, shape.dimensions, idx):
                values = [ctx.read(x, idx) for x in xs]
                results = ctx.scalar_graph(computation, [*accs, *values, *extra_texts])
                new = [ctx.fresh("r") for _ in outs]
                for name, t, r in zip(new, acc_types, results):
                    ctx.emit(f"{name} = {cast(t, r)}")
                for acc, name in zip(accs, new):
                    ctx.emit(f"{acc} = {name}")
            for out, acc in zip(outs, accs):
                ctx.write(out, kept, acc)
        else:
            accs = [ctx.fresh("acc") for _ in outs]
            for acc, out in zip(accs, outs):
                ctx.emit(f"{acc} = {ctx.read(out, kept)}")
            values = [ctx.read(x, idx) for x in xs]
            results = ctx.scalar_graph(computation, [*accs, *values, *extra_texts])
            for out, t, r in zip(outs, types, results):
                ctx.write(out, kept, cast(t, r))


lowerings[red.reduce_p] = _lower_reduce
fusion_consumers.add(red.reduce_p)
