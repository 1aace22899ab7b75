"""JVP, VJP and batching rules of Gather and the Scatters (primitives/indexing.py).

Gather is linear in its operand and transposes to ``scatter_add`` with the
same dimension numbers renamed (offset dims = update window dims, collapsed
slice dims = inserted window dims, start_index_map =
scatter_dims_to_operand_dims, batching dims kept); ``scatter_add``'s updates
cotangent is the Gather of the cotangent with the same correspondence.  The
two ops treat out-of-bounds indices differently (Gather clamps the start so
the slice fits, Scatter skips the whole window), so Gather's transpose clamps
its indices first and Scatter's masks the windows it skipped.

Overwriting ``scatter`` follows JAX: the tangent of a target comes from the
update that won it (found by scattering update ids and gathering them back),
or from the operand where no update landed.  ``scatter_min``/``scatter_max``
average the tangents of the values equal to the result (JAX's convention for
ties).  A ``scatter`` whose computation is a single add/mul/min/max goes to
the matching named rule; any other computation has no derivative here.

Batching adds the batch as a new leading dimension: an operand/indices
batching dimension pair when the indices are batched, a window (offset)
dimension when only the operand or the updates are.  A ``scatter`` whose
update computation closes over a batched value loops over the batch.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import numxla.primitives as lax
from numxla.primitives import elementwise as ew
from numxla.primitives import indexing as ix
from numxla.primitives.indexing import GatherDimensionNumbers, ScatterDimensionNumbers
from numxla.primitives.reductions import single_binary_op
from numxla.tracer.core import AbstractValue, abstractify

from .rules import Forward, Zero, add_tangents, batch_by_loop, batch_rules, bdim_size, \
    instantiate, is_zero, jvp_rules, move_batch_dim, scalar_like, select_or_zero, vjp_rules, \
    zeros_like_aval

__all__ = ["take_along_axis", "scatter_add_along_axis"]


# -- dimension numbers and masks -------------------------------------------------------

def _scatter_dnums(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims)


def _gather_dnums(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)


def _window_sizes(operand: Any, updates: Any, dn: ScatterDimensionNumbers) -> tuple[int, ...]:
    """The size of a Scatter's update window in every operand dimension."""
    no_window = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    upd = abstractify(updates).dimensions
    window = iter(dn.update_window_dims)
    return tuple(1 if d in no_window else upd[next(window)]
                 for d in range(abstractify(operand).ndim))


def _full(value: Any, aval: AbstractValue) -> Any:
    """``value`` broadcast to ``aval``'s shape, of its element type."""
    return lax.broadcast_in_dim(scalar_like(aval, value), aval.dimensions, ())


def _upper_bounds(indices: Any, operand: Any, sizes: tuple[int, ...], index_map) -> Any:
    """The largest start index of each index vector component, broadcast like ``indices``."""
    aval = abstractify(indices)
    dims = abstractify(operand).dimensions
    bounds = np.asarray([dims[d] - sizes[d] for d in index_map], aval.dtype)
    return lax.broadcast_in_dim(bounds, aval.dimensions, (aval.ndim - 1,))


def _clamp_indices(indices: Any, operand: Any, sizes: tuple[int, ...], index_map) -> Any:
    """Gather's own clamping of start indices, made explicit (for a Scatter)."""
    aval = abstractify(indices)
    low = _full(0, aval)
    return lax.min(lax.max(indices, low), _upper_bounds(indices, operand, sizes, index_map))


def _windows_in_bounds(operand: Any, indices: Any, updates: Any,
                       dn: ScatterDimensionNumbers) -> Any:
    """An updates-shaped mask: True where the update's window fits (Scatter
    applies it), False where Scatter skips it."""
    aval = abstractify(indices)
    sizes = _window_sizes(operand, updates, dn)
    ok = lax.and_(lax.ge(indices, _full(0, aval)),
                  lax.le(indices, _upper_bounds(indices, operand, sizes,
                                                dn.scatter_dims_to_operand_dims)))
    ok = lax.reduce_and(ok, (aval.ndim - 1,))
    upd = abstractify(updates)
    scatter_dims = tuple(d for d in range(upd.ndim) if d not in dn.update_window_dims)
    return lax.broadcast_in_dim(ok, upd.dimensions, scatter_dims)


def _gather_windows(x: Any, operand: Any, indices: Any, updates: Any,
                    dn: ScatterDimensionNumbers) -> Any:
    """The updates-shaped Gather of the operand-shaped ``x`` at a Scatter's
    windows (clamped where Scatter would skip the window)."""
    return ix.gather_p.bind(x, indices, dimension_numbers=_gather_dnums(dn),
                            slice_sizes=_window_sizes(operand, updates, dn),
                            indices_are_sorted=False, unique_indices=False)


def _gather_updates(ct: Any, operand: Any, indices: Any, updates: Any,
                    dn: ScatterDimensionNumbers) -> Any:
    """The transpose of scattering ``updates``: :func:`_gather_windows` of the
    cotangent, zero for the windows Scatter skipped."""
    return select_or_zero(_windows_in_bounds(operand, indices, updates, dn),
                          _gather_windows(ct, operand, indices, updates, dn))


def _flags(params: dict) -> dict:
    return {k: params[k] for k in ("dimension_numbers", "indices_are_sorted", "unique_indices")}


def take_along_axis(x: Any, indices: Any, axis: int) -> Any:
    """``x`` indexed along ``axis`` by ``indices`` (same rank; the other
    dimensions equal): one Gather with every other dimension a batching
    dimension.  The sort and top_k rules gather their tangents with it."""
    aval = abstractify(indices)
    others = tuple(d for d in range(aval.ndim) if d != axis)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,),
                                start_index_map=(axis,), operand_batching_dims=others,
                                start_indices_batching_dims=others)
    idx = lax.reshape(indices, aval.dimensions + (1,))
    return ix.gather_p.bind(x, idx, dimension_numbers=dn, slice_sizes=(1,) * aval.ndim,
                            indices_are_sorted=False, unique_indices=False)


def scatter_add_along_axis(x_aval: Any, indices: Any, values: Any, axis: int) -> Any:
    """The transpose of :func:`take_along_axis`: ``values`` added into zeros
    of ``x_aval`` at ``indices`` along ``axis``."""
    aval = abstractify(indices)
    others = tuple(d for d in range(aval.ndim) if d != axis)
    dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(axis,),
                                 scatter_dims_to_operand_dims=(axis,),
                                 operand_batching_dims=others,
                                 scatter_indices_batching_dims=others)
    idx = lax.reshape(indices, aval.dimensions + (1,))
    return ix.scatter_add_p.bind(zeros_like_aval(x_aval), idx, values, dimension_numbers=dn,
                                 indices_are_sorted=False, unique_indices=False)


# -- gather -----------------------------------------------------------------------------

def _gather_jvp(primals, tangents, **params):
    operand, indices = primals
    out = ix.gather_p.bind(operand, indices, **params)
    if is_zero(tangents[0]):
        return out, Zero(abstractify(out))
    return out, ix.gather_p.bind(tangents[0], indices, **params)


def _gather_vjp(ct, fwd, operand, indices, *, dimension_numbers, slice_sizes,
                indices_are_sorted, unique_indices):
    """Scatter-add of the cotangent at the (clamped, as Gather reads) starts."""
    if not fwd.wants[0]:
        return None, None
    dn = dimension_numbers
    clamped = _clamp_indices(indices, operand, slice_sizes, dn.start_index_map)
    ct_operand = ix.scatter_add_p.bind(
        zeros_like_aval(abstractify(operand)), clamped, ct,
        dimension_numbers=_scatter_dnums(dn), indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices)
    return ct_operand, None


jvp_rules[ix.gather_p] = _gather_jvp
vjp_rules[ix.gather_p] = _gather_vjp


# -- scatter_add ---------------------------------------------------------------------------

def _scatter_add_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    out = ix.scatter_add_p.bind(*primals, **params)
    t_op, _, t_upd = tangents
    if is_zero(t_op) and is_zero(t_upd):
        return out, Zero(abstractify(out))
    if is_zero(t_upd):
        return out, t_op
    return out, ix.scatter_add_p.bind(instantiate(t_op), indices, t_upd, **params)


def _scatter_add_vjp(ct, fwd, operand, indices, updates, **params):
    ct_upd = _gather_updates(ct, operand, indices, updates, params["dimension_numbers"]) \
        if fwd.wants[2] else None
    return (ct if fwd.wants[0] else None), None, ct_upd


jvp_rules[ix.scatter_add_p] = _scatter_add_jvp
vjp_rules[ix.scatter_add_p] = _scatter_add_vjp


# -- scatter_mul ---------------------------------------------------------------------------

def _scatter_mul_jvp(primals, tangents, **params):
    """Linear in the operand (``scatter_mul(t, i, y)``); in the updates, as
    JAX, ``x * scatter_add(0, i, t)``, exact only when indices are unique."""
    operand, indices, updates = primals
    out = ix.scatter_mul_p.bind(*primals, **params)
    t_op, _, t_upd = tangents
    t_out = Zero(abstractify(out))
    if not is_zero(t_op):
        t_out = ix.scatter_mul_p.bind(t_op, indices, updates, **params)
    if not is_zero(t_upd):
        _require_unique("scatter_mul", params)
        added = ix.scatter_add_p.bind(zeros_like_aval(abstractify(operand)), indices, t_upd,
                                      **params)
        t_out = add_tangents(t_out, lax.mul(operand, added))
    return out, t_out


def _scatter_mul_vjp(ct, fwd, operand, indices, updates, **params):
    ct_op = ix.scatter_mul_p.bind(ct, indices, updates, **params) if fwd.wants[0] else None
    ct_upd = None
    if fwd.wants[2]:
        _require_unique("scatter_mul", params)
        ct_upd = _gather_updates(lax.mul(ct, operand), operand, indices, updates,
                                 params["dimension_numbers"])
    return ct_op, None, ct_upd


def _require_unique(name: str, params: dict) -> None:
    if not params["unique_indices"]:
        raise NotImplementedError(f"{name}: the derivative with respect to the updates is "
                                  f"only defined with unique_indices=True (as in JAX)")


jvp_rules[ix.scatter_mul_p] = _scatter_mul_jvp
vjp_rules[ix.scatter_mul_p] = _scatter_mul_vjp


# -- scatter_min / scatter_max ----------------------------------------------------------------

def _extremal_coefficients(operand, indices, updates, out, params):
    """(operand coefficient, updates coefficient): ``1/count`` for the values
    equal to the result at their target (``count``: how many are), else 0."""
    dn = params["dimension_numbers"]
    op_aval, upd_aval = abstractify(operand), abstractify(updates)
    won = lax.and_(lax.eq(updates, _gather_windows(out, operand, indices, updates, dn)),
                   _windows_in_bounds(operand, indices, updates, dn))
    kept = lax.eq(operand, out)
    zeros_op, ones_op = zeros_like_aval(op_aval), _full(1, op_aval)
    n_won = ix.scatter_add_p.bind(zeros_op, indices, select_or_zero(won, _full(1, upd_aval)),
                                  **params)
    count = lax.add(n_won, lax.select(kept, ones_op, zeros_op))
    inv = lax.div(ones_op, lax.max(count, ones_op))
    return (lax.select(kept, inv, zeros_op),
            select_or_zero(won, _gather_windows(inv, operand, indices, updates, dn)))


def _extremal_rules(prim):
    """The JVP and VJP of ``scatter_min``/``scatter_max``: linear in the
    tangents with the coefficients above (ties share the derivative)."""
    def jvp(primals, tangents, **params):
        operand, indices, updates = primals
        out = prim.bind(*primals, **params)
        t_op, _, t_upd = tangents
        if is_zero(t_op) and is_zero(t_upd):
            return out, Zero(abstractify(out))
        op_coef, upd_coef = _extremal_coefficients(operand, indices, updates, out, params)
        t_out = Zero(abstractify(out)) if is_zero(t_op) else lax.mul(op_coef, t_op)
        if not is_zero(t_upd):
            t_out = add_tangents(t_out, ix.scatter_add_p.bind(
                zeros_like_aval(abstractify(operand)), indices, lax.mul(upd_coef, t_upd),
                **params))
        return out, t_out

    def vjp(ct, fwd, operand, indices, updates, **params):
        op_coef, upd_coef = _extremal_coefficients(operand, indices, updates, fwd.out, params)
        dn = params["dimension_numbers"]
        return (lax.mul(op_coef, ct) if fwd.wants[0] else None, None,
                lax.mul(upd_coef, _gather_windows(ct, operand, indices, updates, dn))
                if fwd.wants[2] else None)

    jvp_rules[prim] = jvp
    vjp_rules[prim] = vjp


_extremal_rules(ix.scatter_min_p)
_extremal_rules(ix.scatter_max_p)


# -- scatter (overwrite, or a computation) ------------------------------------------------------

def _overwrite_masks(operand, indices, updates, dn):
    """(kept, won): operand-shaped, True where no update landed; updates-shaped,
    True for the update elements that are the final value of their target
    (ids of the updates scattered, then gathered back and compared)."""
    idx = abstractify(indices)
    upd = abstractify(updates)
    op = abstractify(operand)
    scatter_shape = idx.dimensions[:-1]
    ids = np.arange(1, int(np.prod(scatter_shape, dtype=np.int64)) + 1,
                    dtype=np.int32).reshape(scatter_shape)
    scatter_dims = tuple(d for d in range(upd.ndim) if d not in dn.update_window_dims)
    ids = lax.broadcast_in_dim(ids, upd.dimensions, scatter_dims)
    zeros = lax.broadcast_in_dim(np.int32(0), op.dimensions, ())
    (written,) = ix.scatter_p.bind(zeros, indices, ids, dimension_numbers=dn,
                                   indices_are_sorted=False, unique_indices=False,
                                   update_computation=None)
    kept = lax.eq(written, zeros)
    return kept, lax.eq(_gather_windows(written, operand, indices, updates, dn), ids)


def _num_operands(graph, n_args: int) -> int:
    """N of a scatter's N operands, indices, N updates (and captured values)."""
    return (n_args - 1) // 2 if graph is None else len(graph.out_avals)


def _overwrite_jvp(primals, tangents, **params):
    n = _num_operands(params["update_computation"], len(primals))
    operands, indices, updates = primals[:n], primals[n], primals[n + 1:2 * n + 1]
    t_ops, t_upds = tangents[:n], tangents[n + 1:2 * n + 1]
    outs = ix.scatter_p.bind(*primals, **params)
    dn, flags = params["dimension_numbers"], _flags(params)
    t_outs, masks = [], None
    for o, u, to, tu, out in zip(operands, updates, t_ops, t_upds, outs):
        if is_zero(to) and is_zero(tu):
            t_outs.append(Zero(abstractify(out)))
            continue
        to, tu = instantiate(to), instantiate(tu)
        if params["unique_indices"]:   # each target written once: the op itself is linear
            t_outs.append(ix.scatter_p.bind(to, indices, tu, update_computation=None,
                                            **flags)[0])
            continue
        masks = masks or _overwrite_masks(o, indices, u, dn)
        kept, won = masks
        t_outs.append(ix.scatter_add_p.bind(select_or_zero(kept, to), indices,
                                            select_or_zero(won, tu), **flags))
    return outs, tuple(t_outs)


def _overwrite_vjp(cts, fwd, *primals, **params):
    n = _num_operands(params["update_computation"], len(primals))
    operands, indices, updates = primals[:n], primals[n], primals[n + 1:2 * n + 1]
    dn, flags = params["dimension_numbers"], _flags(params)
    ct_ops, ct_upds, masks = [], [], None
    for i, (o, u, ct) in enumerate(zip(operands, updates, cts)):
        want_o, want_u = fwd.wants[i], fwd.wants[n + 1 + i]
        if is_zero(ct) or not (want_o or want_u):
            ct_ops.append(None)
            ct_upds.append(None)
            continue
        if params["unique_indices"]:
            ct_ops.append(ix.scatter_p.bind(ct, indices, zeros_like_aval(abstractify(u)),
                                            update_computation=None, **flags)[0]
                          if want_o else None)
            ct_upds.append(_gather_updates(ct, o, indices, u, dn) if want_u else None)
            continue
        masks = masks or _overwrite_masks(o, indices, u, dn)
        kept, won = masks
        ct_ops.append(select_or_zero(kept, ct) if want_o else None)
        ct_upds.append(select_or_zero(won, _gather_windows(ct, o, indices, u, dn))
                       if want_u else None)
    return (*ct_ops, None, *ct_upds, *([None] * (len(primals) - 2 * n - 1)))


_NAMED = {ew.add_p: ix.scatter_add_p, ew.mul_p: ix.scatter_mul_p, ew.min_p: ix.scatter_min_p,
          ew.max_p: ix.scatter_max_p}


def _is_overwrite(graph) -> bool:
    """A computation that returns its "new" parameters unchanged."""
    if graph is None:
        return True
    n = len(graph.out_avals)
    return (not graph.equations and len(graph.in_vars) == 2 * n
            and all(a is v for a, v in zip(graph.out_atoms, graph.in_vars[n:])))


def _named_for(graph, n_args: int):
    """The named scatter primitive equivalent to ``graph``, if any."""
    if graph is None or len(graph.out_avals) != 1 or n_args != 3:
        return None
    return _NAMED.get(single_binary_op(graph))


def _no_rule(graph) -> NotImplementedError:
    return NotImplementedError(
        f"scatter: no derivative for the update computation {graph.name!r} (only a single "
        f"add, mul, min or max, or an overwrite, are differentiable)")


def _scatter_jvp(primals, tangents, **params):
    graph = params["update_computation"]
    named = _named_for(graph, len(primals))
    if named is not None:
        out, t_out = jvp_rules[named](primals, tangents, **_flags(params))
        return (out,), (t_out,)
    if _is_overwrite(graph):
        return _overwrite_jvp(primals, tangents, **params)
    raise _no_rule(graph)


def _scatter_vjp(cts, fwd, *primals, **params):
    graph = params["update_computation"]
    named = _named_for(graph, len(primals))
    if named is not None:
        (ct,) = cts
        if is_zero(ct):
            return (None,) * len(primals)
        return vjp_rules[named](ct, Forward(fwd.out[0], fwd.wants), *primals, **_flags(params))
    if _is_overwrite(graph):
        return _overwrite_vjp(cts, fwd, *primals, **params)
    raise _no_rule(graph)


jvp_rules[ix.scatter_p] = _scatter_jvp
vjp_rules[ix.scatter_p] = _scatter_vjp


# -- batching ---------------------------------------------------------------------------------

def _shift(dims, by: int = 1) -> tuple[int, ...]:
    return tuple(d + by for d in dims)


def _gather_batch(args, dims, *, dimension_numbers, slice_sizes, **flags):
    """Batch at operand/indices dimension 0: a new batching-dimension pair
    (both batched), offset dimension 0 (operand only) or leading index batch
    dimension (indices only); the result's batch is dimension 0."""
    (operand, indices), (od, idd) = args, dims
    dn = dimension_numbers
    size = bdim_size(args, dims)
    if idd is None:
        operand = move_batch_dim(operand, od, 0, size)
        new = GatherDimensionNumbers(
            offset_dims=(0, *_shift(dn.offset_dims)),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            start_indices_batching_dims=dn.start_indices_batching_dims)
        sizes = (size, *slice_sizes)
    elif od is None:
        indices = move_batch_dim(indices, idd, 0, size)
        new = GatherDimensionNumbers(
            offset_dims=_shift(dn.offset_dims), collapsed_slice_dims=dn.collapsed_slice_dims,
            start_index_map=dn.start_index_map, operand_batching_dims=dn.operand_batching_dims,
            start_indices_batching_dims=_shift(dn.start_indices_batching_dims))
        sizes = tuple(slice_sizes)
    else:
        operand = move_batch_dim(operand, od, 0, size)
        indices = move_batch_dim(indices, idd, 0, size)
        new = GatherDimensionNumbers(
            offset_dims=_shift(dn.offset_dims),
            collapsed_slice_dims=_shift(dn.collapsed_slice_dims),
            start_index_map=_shift(dn.start_index_map),
            operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
            start_indices_batching_dims=(0, *_shift(dn.start_indices_batching_dims)))
        sizes = (1, *slice_sizes)
    out = ix.gather_p.bind(operand, indices, dimension_numbers=new, slice_sizes=sizes, **flags)
    return out, 0


batch_rules[ix.gather_p] = _gather_batch


def _batched_scatter_args(operands, indices, updates, op_dims, idx_dim, upd_dims, dn, size):
    """Operands and updates with the batch at 0 (broadcast where unbatched),
    and the dimension numbers that scatter each batch element separately."""
    operands = [move_batch_dim(o, d, 0, size) for o, d in zip(operands, op_dims)]
    updates = [move_batch_dim(u, d, 0, size) for u, d in zip(updates, upd_dims)]
    if idx_dim is None:   # the batch is one more window dimension
        new = ScatterDimensionNumbers(
            update_window_dims=(0, *_shift(dn.update_window_dims)),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    else:                 # a new operand/indices batching dimension pair
        indices = move_batch_dim(indices, idx_dim, 0, size)
        new = ScatterDimensionNumbers(
            update_window_dims=_shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)))
    return operands, indices, updates, new


def _named_scatter_batch(prim):
    def rule(args, dims, *, dimension_numbers, **flags):
        size = bdim_size(args, dims)
        (op,), idx, (upd,), dn = _batched_scatter_args(
            [args[0]], args[1], [args[2]], [dims[0]], dims[1], [dims[2]], dimension_numbers,
            size)
        return prim.bind(op, idx, upd, dimension_numbers=dn, **flags), 0
    batch_rules[prim] = rule


for _p in (ix.scatter_add_p, ix.scatter_mul_p, ix.scatter_min_p, ix.scatter_max_p):
    _named_scatter_batch(_p)


def _scatter_batch(args, dims, *, dimension_numbers, update_computation, **flags):
    """A batched value the update computation closes over (and takes whole)
    has no batched form: a loop over the batch."""
    n = _num_operands(update_computation, len(args))
    captured, cap_dims = args[2 * n + 1:], dims[2 * n + 1:]
    if any(d is not None for d in cap_dims):
        return batch_by_loop(ix.scatter_p, args, dims, dimension_numbers=dimension_numbers,
                             update_computation=update_computation, **flags)
    size = bdim_size(args, dims)
    ops, idx, upds, dn = _batched_scatter_args(
        args[:n], args[n], args[n + 1:2 * n + 1], dims[:n], dims[n], dims[n + 1:2 * n + 1],
        dimension_numbers, size)
    outs = ix.scatter_p.bind(*ops, idx, *upds, *captured, dimension_numbers=dn,
                             update_computation=update_computation, **flags)
    return outs, (0,) * n


batch_rules[ix.scatter_p] = _scatter_batch
