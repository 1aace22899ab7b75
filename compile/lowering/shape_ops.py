"""Lowerings of the shape and data-movement ops (primitives/shape_ops.py):
index remaps written as loops over the result (or over the part of an
operand that lands in it), every element addressed through its layout.

Reshape and collapse between row-major buffers are free aliases (a
bitcast); every other op copies.  Dynamic start indices are clamped as the
reference semantics clamp them, so no index value reads or writes outside a
buffer.  The helpers at the top (:func:`box_loops`, :func:`alloc`,
:func:`copy_value`, :func:`index_as_int64`) are shared with
``compile/lowering/indexing.py``.
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Sequence

import numpy as np

from numxla.primitives import shape_ops
from numxla.tracer.graph import Equation, Literal, Var
from numxla.tracer.shapes import PrimitiveType, Shape

from ..codegen import LoweringContext, dtype_name, literal_text
from ..kernels import copy as copy_kernels
from ..layout_assignment import transpose_layout
from ..layout_index import dense_strides, linear_index_expr, loop_order
from ..registry import (LIBRARY_MAX_ELEMENTS, LibraryCall, bitcasts, cheap_producers, fused_reads,
                        layout_rules, library_rules, lowerings)

__all__ = ["box_loops", "remap_loops", "alloc", "copy_value", "index_as_int64", "affine",
           "zero_word", "lower_set_dimension_size",
           "clamp_start", "move_read", "move_write"]

Bound = int | str
_SATURATE_U64 = 2 ** 62  # the reference saturates u64 indices here (still out of bounds)
_HALF = (PrimitiveType.F16, PrimitiveType.BF16)


# -- shared helpers ------------------------------------------------------------------

@contextlib.contextmanager
def box_loops(ctx: LoweringContext, bounds: Sequence[tuple[Bound, Bound]],
              order: Sequence[int], prefix: str = "i") -> Iterator[list[str]]:
    """Nested loops ``for idx[d] in range(lo_d, hi_d)`` over the dimensions
    ``order`` (outermost first); yields one index variable per dimension
    (``""`` for dimensions not in ``order``).  Names are fresh, so boxes nest."""
    index = [""] * len(bounds)
    with contextlib.ExitStack() as stack:
        for d in order:
            lo, hi = bounds[d]
            index[d] = ctx.fresh(prefix)
            rng = f"range({hi})" if lo == 0 else f"range({lo}, {hi})"
            stack.enter_context(ctx.block(f"for {index[d]} in {rng}:"))
        yield index


_BLOCK = 32  # edge of the square blocks of a remap whose read and write minors differ


@contextlib.contextmanager
def remap_loops(ctx: LoweringContext, shape: Shape, src_minor: int | None,
                prefix: str = "i") -> Iterator[list[str]]:
    """Loops over every index of ``shape`` (the result) for a copy that reads
    a source whose most-minor physical dimension walks result dimension
    ``src_minor``.  When that is not the result's most-minor dimension (a
    transpose, a layout change), the two minors are walked in 32x32 blocks, the
    source's innermost, so both buffers are read and written a cache line at a
    time (3x faster than walking either one with a large stride)."""
    order = _order_of(shape)
    dims = shape.dimensions
    a = order[-1] if order else None
    if src_minor is None or src_minor == a or dims[a] < 2 * _BLOCK or \
            dims[src_minor] < 2 * _BLOCK:
        with box_loops(ctx, [(0, n) for n in dims], order, prefix) as idx:
            yield idx
        return
    b = src_minor
    with box_loops(ctx, [(0, n) for n in dims], [d for d in order if d not in (a, b)],
                   prefix) as idx:
        blocks = {d: ctx.fresh("blk") for d in (a, b)}
        with contextlib.ExitStack() as stack:
            for d in (a, b):
                stack.enter_context(ctx.block(f"for {blocks[d]} in range(0, {dims[d]}, "
                                              f"{_BLOCK}):"))
            for d in (a, b):
                idx[d] = ctx.fresh(prefix)
                stack.enter_context(ctx.block(
                    f"for {idx[d]} in range({blocks[d]}, min({blocks[d]} + {_BLOCK}, "
                    f"{dims[d]})):"))
            yield idx


def _minor(shape: Shape) -> int | None:
    """The most-minor logical dimension of ``shape`` (None for rank 0)."""
    return shape.layout.minor_to_major[0] if shape.dimensions else None


def alloc(ctx: LoweringContext, var: Var, *, zero: bool = False) -> str:
    """The output buffer of ``var``; zeroed when its layout has padding or tiles,
    so the elements no logical index reaches are defined."""
    layout = var.aval.shape.layout
    return ctx.alloc(var, zero=zero or bool(layout.padded_dimensions or layout.tiles))


def move_read(ctx: LoweringContext, atom: Var | Literal, index: Sequence[str]) -> str:
    """Element ``index`` of ``atom`` for an op that only moves values: as
    ``ctx.read``, except that 16-bit floats stay their stored uint16 words
    (no f32 round trip, so every bit pattern, NaN payloads included, is kept).
    Pair with :func:`move_write`."""
    t = atom.aval.element_type
    if t not in _HALF:
        return ctx.read(atom, index)
    if isinstance(atom, Literal):
        return f"np.uint16({_half_word(atom.value, t)})"
    return f"{ctx.name(atom)}[{linear_index_expr(atom.aval.shape, list(index))}]"


def move_write(ctx: LoweringContext, var: Var, index: Sequence[str], value: str) -> None:
    """Store a value from :func:`move_read` (through the layout, as ``ctx.write``)."""
    if var.aval.element_type not in _HALF:
        ctx.write(var, index, value)
    else:
        ctx.emit(f"{ctx.name(var)}[{linear_index_expr(var.aval.shape, list(index))}] = {value}")


def _half_word(value, t: PrimitiveType) -> int:
    arr = np.asarray(value)
    if t is PrimitiveType.BF16:
        if arr.dtype != np.uint16:
            from numxla.tracer.shapes import bf16_from_f32
            arr = bf16_from_f32(arr.astype(np.float32))
        return int(arr.astype(np.uint16))
    return int(arr.astype(np.float16).view(np.uint16))


def copy_value(ctx: LoweringContext, src: Var | Literal, out: Var) -> None:
    """Emit ``out = src`` (``out``'s buffer already allocated): a flat copy when
    both have the same shape and layout, else a loop through both layouts."""
    shape = out.aval.shape
    if isinstance(src, Var) and src.aval.shape == shape:
        k = ctx.fresh("k")
        with ctx.block(f"for {k} in range({shape.physical_size}):"):
            ctx.emit(f"{ctx.name(out)}[{k}] = {ctx.name(src)}[{k}]")
        return
    src_minor = _minor(src.aval.shape) if isinstance(src, Var) else None
    with remap_loops(ctx, shape, src_minor, prefix="c") as idx:
        move_write(ctx, out, idx, move_read(ctx, src, idx))


def index_as_int64(t: PrimitiveType, text: str) -> str:
    """An integer index value as an int64 expression: exact for every integer
    type except u64 values above 2**62, which saturate there (as the
    reference semantics do): far out of bounds either way."""
    if t is PrimitiveType.U64:
        return (f"(np.int64({text}) if {text} <= np.uint64({_SATURATE_U64}) "
                f"else np.int64({_SATURATE_U64}))")
    return f"np.int64({text})"


def clamp_start(ctx: LoweringContext, t: PrimitiveType, text: str, hi: int) -> str:
    """Emit ``s = clamp(index, 0, hi)`` in int64 and return ``s``."""
    name = ctx.fresh("s")
    ctx.emit(f"{name} = {index_as_int64(t, text)}")
    ctx.emit(f"{name} = min(max({name}, 0), {hi})")
    return name


def affine(base: str | int, index: str, scale: int = 1) -> str:
    """``(base + index * scale)`` as source text, folded where trivial."""
    term = index if scale == 1 else f"{index} * {scale}"
    if base == 0 or base == "0":
        return term if scale == 1 else f"({term})"
    return f"({base} + {term})"


def _order_of(shape: Shape, dims: Sequence[int] | None = None) -> list[int]:
    """Dimensions of ``shape`` (or those of ``dims``) from most major to most minor."""
    order = list(loop_order(shape))
    return order if dims is None else [d for d in order if d in dims]


# -- broadcast, broadcast_in_dim, transpose, rev, slice --------------------------------

def _lower_broadcast(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    n = len(eq.params["sizes"])
    alloc(ctx, out)
    src_minor = n + _minor(x.aval.shape) if isinstance(x, Var) and x.aval.ndim else None
    with remap_loops(ctx, out.aval.shape, src_minor) as idx:
        move_write(ctx, out, idx, move_read(ctx, x, idx[n:]))


def _lower_broadcast_in_dim(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    dims = eq.params["broadcast_dimensions"]
    alloc(ctx, out)
    m = _minor(x.aval.shape) if isinstance(x, Var) else None
    src_minor = dims[m] if m is not None and x.aval.dimensions[m] > 1 else None
    with remap_loops(ctx, out.aval.shape, src_minor) as idx:
        src = ["0" if x.aval.dimensions[i] == 1 else idx[d] for i, d in enumerate(dims)]
        move_write(ctx, out, idx, move_read(ctx, x, src))


def _transpose_is_bitcast(eq: Equation) -> bool:
    """Whether the result's layout is the operand's physical order (layout
    assignment arranges it): the same buffer, read with permuted dimensions."""
    (x,), (out,) = eq.inputs, eq.outputs
    return isinstance(x, Var) and transpose_layout(eq, [x.aval.shape]) == out.aval.shape.layout


def _reshape_is_bitcast(eq: Equation) -> bool:
    """Row-major to row-major keeps the element sequence: the same buffer."""
    (x,), (out,) = eq.inputs, eq.outputs
    return isinstance(x, Var) and x.aval.shape.has_default_layout and \
        out.aval.shape.has_default_layout


def _lower_transpose(ctx: LoweringContext, eq: Equation) -> None:
    """A bitcast when the result's layout is the operand's physical order
    (layout assignment arranges it); otherwise a copy, blocked by remap_loops."""
    (x,), (out,) = eq.inputs, eq.outputs
    perm = eq.params["permutation"]
    if _transpose_is_bitcast(eq):
        ctx.alias(out, x)
        return
    alloc(ctx, out)
    src_minor = perm.index(_minor(x.aval.shape)) if isinstance(x, Var) and perm else None
    with remap_loops(ctx, out.aval.shape, src_minor) as idx:
        src = [""] * len(perm)
        for i, p in enumerate(perm):
            src[p] = idx[i]
        move_write(ctx, out, idx, move_read(ctx, x, src))


def _lower_rev(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    dims = set(eq.params["dimensions"])
    alloc(ctx, out)
    with remap_loops(ctx, out.aval.shape, _minor(x.aval.shape)) as idx:
        src = [f"({n - 1} - {i})" if d in dims else i
               for d, (i, n) in enumerate(zip(idx, out.aval.dimensions))]
        move_write(ctx, out, idx, move_read(ctx, x, src))


def _lower_slice(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    p = eq.params
    alloc(ctx, out)
    with remap_loops(ctx, out.aval.shape, _minor(x.aval.shape)) as idx:
        src = [affine(s, i, st) for i, s, st in zip(idx, p["start_indices"], p["strides"])]
        move_write(ctx, out, idx, move_read(ctx, x, src))


# -- reshape and collapse ---------------------------------------------------------------

def _row_major_strides(dims: Sequence[int]) -> list[int]:
    return [int(s) for s in np.cumprod((1,) + tuple(dims)[::-1])[::-1][1:]]


def _flat_text(idx: Sequence[str], dims: Sequence[int]) -> str:
    terms = [i if s == 1 else f"{i} * {s}" for i, s in zip(idx, _row_major_strides(dims))]
    return " + ".join(terms) or "0"


def _lower_reshape(ctx: LoweringContext, eq: Equation) -> None:
    """The row-major element sequence is kept: free between row-major buffers;
    otherwise one loop in the physical order of the non-row-major side, with the
    other side addressed by its row-major position (no division) when it can be."""
    (x,), (out,) = eq.inputs, eq.outputs
    x_default = isinstance(x, Literal) or x.aval.shape.has_default_layout
    out_default = out.aval.shape.has_default_layout
    if _reshape_is_bitcast(eq):
        ctx.alias(out, x)
        return
    alloc(ctx, out)
    if isinstance(x, Literal):
        with ctx.loops(out.aval.shape) as idx:
            move_write(ctx, out, idx, move_read(ctx, x, []))
        return
    if out_default:  # walk the operand in its physical order
        with ctx.loops(x.aval.shape, prefix=ctx.fresh("r") + "_") as idx:
            ctx.emit(f"{ctx.name(out)}[{_flat_text(idx, x.aval.dimensions)}] = "
                     f"{move_read(ctx, x, idx)}")
        return
    if x_default:  # walk the result in its physical order
        with ctx.loops(out.aval.shape, prefix=ctx.fresh("r") + "_") as idx:
            move_write(ctx, out, idx, f"{ctx.name(x)}[{_flat_text(idx, out.aval.dimensions)}]")
        return
    in_dims = x.aval.dimensions
    with ctx.loops(out.aval.shape, prefix=ctx.fresh("r") + "_") as idx:
        flat = ctx.fresh("flat")
        ctx.emit(f"{flat} = {_flat_text(idx, out.aval.dimensions)}")
        src = [f"(({flat} // {s}) % {d})" if s > 1 else f"({flat} % {d})"
               for d, s in zip(in_dims, _row_major_strides(in_dims))]
        move_write(ctx, out, idx, move_read(ctx, x, src))


# -- dynamic_slice, dynamic_update_slice -------------------------------------------------

def _clamped_starts(ctx: LoweringContext, starts: Sequence[Var | Literal],
                    dims: Sequence[int], sizes: Sequence[int]) -> list[str]:
    """``clamp(start, 0, dim - size)`` per dimension (int64 locals, or constants)."""
    out = []
    for s, d, n in zip(starts, dims, sizes):
        if d - n == 0:
            out.append("0")  # the only start that fits
        elif isinstance(s, Literal):
            v = int(np.asarray(s.value).astype(np.int64)) if s.aval.element_type is not \
                PrimitiveType.U64 else min(int(s.value), _SATURATE_U64)
            out.append(str(min(max(v, 0), d - n)))
        else:
            out.append(clamp_start(ctx, s.aval.element_type, ctx.read(s, []), d - n))
    return out


def _lower_dynamic_slice(ctx: LoweringContext, eq: Equation) -> None:
    x, *starts = eq.inputs
    (out,) = eq.outputs
    sizes = eq.params["slice_sizes"]
    alloc(ctx, out)
    if out.aval.size == 0:
        return
    begin = _clamped_starts(ctx, starts, x.aval.dimensions, sizes)
    with remap_loops(ctx, out.aval.shape, _minor(x.aval.shape)) as idx:
        move_write(ctx, out, idx, move_read(ctx, x, [affine(b, i) for b, i in zip(begin, idx)]))


def _lower_dynamic_update_slice(ctx: LoweringContext, eq: Equation) -> None:
    x, update, *starts = eq.inputs
    (out,) = eq.outputs
    alloc(ctx, out)
    copy_value(ctx, x, out)
    if update.aval.size == 0:
        return
    begin = _clamped_starts(ctx, starts, x.aval.dimensions, update.aval.dimensions)
    bounds = [(0, n) for n in update.aval.dimensions]
    with box_loops(ctx, bounds, _order_of(out.aval.shape)) as idx:
        target = [affine(b, i) for b, i in zip(begin, idx)]
        move_write(ctx, out, target, move_read(ctx, update, idx))


# -- pad, concatenate -------------------------------------------------------------------

def _lower_pad(ctx: LoweringContext, eq: Equation) -> None:
    """Fill with the padding value where any padding shows, then place the
    operand elements that land in the result (negative edges cut some)."""
    (x, value), (out,) = eq.inputs, eq.outputs
    config = eq.params["padding_config"]
    alloc(ctx, out)
    if out.aval.size == 0:
        return
    if any(lo > 0 or hi > 0 or (interior > 0 and n > 1)
           for (lo, hi, interior), n in zip(config, x.aval.dimensions)):
        pv = ctx.fresh("pv")
        ctx.emit(f"{pv} = {move_read(ctx, value, [])}")
        with ctx.loops(out.aval.shape, prefix=ctx.fresh("p") + "_") as idx:
            move_write(ctx, out, idx, pv)
    bounds = []
    for (lo, _hi, interior), n, m in zip(config, x.aval.dimensions, out.aval.dimensions):
        step = interior + 1
        first = max(0, -(lo // step))                    # lo + i*step >= 0
        last = min(n, (m - 1 - lo) // step + 1) if m - 1 - lo >= 0 else 0  # lo + i*step < m
        bounds.append((first, max(first, last)))
    if any(a >= b for a, b in bounds):
        return
    with box_loops(ctx, bounds, _order_of(out.aval.shape)) as idx:
        target = [affine(lo, i, interior + 1) for (lo, _, interior), i in zip(config, idx)]
        move_write(ctx, out, target, move_read(ctx, x, idx))


def _lower_concatenate(ctx: LoweringContext, eq: Equation) -> None:
    (out,) = eq.outputs
    dim = eq.params["dimension"]
    alloc(ctx, out)
    offset = 0
    order = _order_of(out.aval.shape)
    for x in eq.inputs:
        if x.aval.size:
            with box_loops(ctx, [(0, n) for n in x.aval.dimensions], order) as idx:
                target = list(idx)
                target[dim] = affine(offset, idx[dim])
                move_write(ctx, out, target, move_read(ctx, x, idx))
        offset += x.aval.dimensions[dim]


# -- iota, get_dimension_size, set_dimension_size ------------------------------------------

def _lower_iota(ctx: LoweringContext, eq: Equation) -> None:
    (out,) = eq.outputs
    dim = eq.params["dimension"]
    alloc(ctx, out)
    t = dtype_name(out.aval.element_type)
    with ctx.loops(out.aval.shape) as idx:
        ctx.write(out, idx, f"{t}({idx[dim]})")


def _lower_get_dimension_size(ctx: LoweringContext, eq: Equation) -> None:
    (x,), (out,) = eq.inputs, eq.outputs
    alloc(ctx, out)
    ctx.write(out, [], f"np.int32({x.aval.dimensions[eq.params['dimension']]})")


def zero_word(t: PrimitiveType) -> str:
    """A zero for :func:`move_write` (a uint16 word for 16-bit floats)."""
    return "np.uint16(0)" if t in _HALF else literal_text(0, t)


def lower_set_dimension_size(ctx: LoweringContext, eq: Equation) -> str:
    """The static bound stays; elements at or past the dynamic size (clamped
    to ``[0, bound]``) read as zero, as the reference semantics define.
    Returns the variable holding that clamped size."""
    (x, size), (out,) = eq.inputs, eq.outputs
    dim = eq.params["dimension"]
    dims = out.aval.dimensions
    alloc(ctx, out)
    n = ctx.fresh("n")
    ctx.emit(f"{n} = min(max(np.int64({ctx.read(size, [])}), 0), {dims[dim]})")
    if out.aval.size == 0:
        return n
    order = _order_of(out.aval.shape)
    zero = zero_word(out.aval.element_type)
    for lo, hi, keep in ((0, n, True), (n, dims[dim], False)):
        bounds = [(0, d) for d in dims]
        bounds[dim] = (lo, hi)
        with box_loops(ctx, bounds, order) as idx:
            move_write(ctx, out, idx, move_read(ctx, x, idx) if keep else zero)
    return n


lowerings.update({
    shape_ops.broadcast_p: _lower_broadcast,
    shape_ops.broadcast_in_dim_p: _lower_broadcast_in_dim,
    shape_ops.reshape_p: _lower_reshape,
    shape_ops.collapse_p: _lower_reshape,
    shape_ops.transpose_p: _lower_transpose,
    shape_ops.rev_p: _lower_rev,
    shape_ops.slice_p: _lower_slice,
    shape_ops.dynamic_slice_p: _lower_dynamic_slice,
    shape_ops.dynamic_update_slice_p: _lower_dynamic_update_slice,
    shape_ops.pad_p: _lower_pad,
    shape_ops.concatenate_p: _lower_concatenate,
    shape_ops.iota_p: _lower_iota,
    shape_ops.get_dimension_size_p: _lower_get_dimension_size,
    shape_ops.set_dimension_size_p: lower_set_dimension_size,
})


# -- fused forms: index remapping inside a consumer's loop ---------------------------------

def _fused_broadcast(ctx: LoweringContext, eq: Equation, idx: Sequence[str]) -> str:
    return ctx.read(eq.inputs[0], idx[len(eq.params["sizes"]):])


def _fused_broadcast_in_dim(ctx: LoweringContext, eq: Equation, idx: Sequence[str]) -> str:
    (x,) = eq.inputs
    dims = eq.params["broadcast_dimensions"]
    return ctx.read(x, ["0" if x.aval.dimensions[i] == 1 else idx[d] for i, d in enumerate(dims)])


def _fused_iota(ctx: LoweringContext, eq: Equation, idx: Sequence[str]) -> str:
    t = eq.outputs[0].aval.element_type
    value = f"{dtype_name(t)}({idx[eq.params['dimension']]})"
    rounding = {PrimitiveType.F16: "round_to_f16", PrimitiveType.BF16: "round_to_bf16"}.get(t)
    return f"{rounding}({value})" if rounding else value


fused_reads.update({
    shape_ops.broadcast_p: _fused_broadcast,
    shape_ops.broadcast_in_dim_p: _fused_broadcast_in_dim,
    shape_ops.iota_p: _fused_iota,
})


# -- library calls: small copies through the pre-compiled strided copy --------------------------

def _library_copy(eq: Equation, source_dim: Sequence[int], reversed_dims=frozenset()
                  ) -> LibraryCall | None:
    """``out[i] = x[j]`` where result dimension ``d`` walks operand dimension
    ``source_dim[d]`` (backwards for ``reversed_dims``), for dense buffers of
    at most ``LIBRARY_MAX_ELEMENTS``."""
    (x,), (out,) = eq.inputs, eq.outputs
    xs, os_ = (dense_strides(a.aval.shape) if isinstance(a, Var) else None for a in (x, out))
    if xs is None or os_ is None or out.aval.shape.size > LIBRARY_MAX_ELEMENTS:
        return None
    dims = out.aval.dimensions
    src = [-xs[source_dim[d]] if d in reversed_dims else xs[source_dim[d]]
           for d in range(len(dims))]
    offset = sum((dims[d] - 1) * xs[source_dim[d]] for d in reversed_dims)
    geometry = copy_kernels.copy_geometry(dims, src, os_, offset)
    return None if geometry is None else \
        LibraryCall.buffers_then(copy_kernels.strided_copy, eq, geometry)


def _library_transpose(eq: Equation) -> LibraryCall | None:
    return None if _transpose_is_bitcast(eq) else _library_copy(eq, eq.params["permutation"])


def _library_rev(eq: Equation) -> LibraryCall | None:
    return _library_copy(eq, range(eq.outputs[0].aval.ndim), frozenset(eq.params["dimensions"]))


library_rules.update({shape_ops.transpose_p: _library_transpose, shape_ops.rev_p: _library_rev})
layout_rules[shape_ops.transpose_p] = transpose_layout
cheap_producers.update({shape_ops.broadcast_p, shape_ops.broadcast_in_dim_p, shape_ops.iota_p})
bitcasts.update({shape_ops.reshape_p: _reshape_is_bitcast, shape_ops.collapse_p: _reshape_is_bitcast,
                 shape_ops.transpose_p: _transpose_is_bitcast})
