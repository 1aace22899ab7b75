"""JVP, VJP and batching rules of the shape and data-movement ops
(primitives/shape_ops.py).

All of them are linear in their array operands (start indices, sizes and
padding configurations are not differentiated), so their JVPs apply the op
to the tangents and their VJPs are the transposes XLA has ops for: a slice
transposes to a pad (strides become interior padding) and a pad to a slice,
a dynamic_slice to a dynamic_update_slice into zeros, a broadcast to a
reduce_sum, a transpose to the inverse transpose, a concatenate to slices.
Batching keeps the batch dimension where the op allows it (a transpose, a
slice, a pad get one more full dimension); dynamic_slice and
dynamic_update_slice with batched start indices become a gather and a
scatter with batching dimensions, as in JAX.
"""
from __future__ import annotations

import numpy as np

import numxla.primitives as lax
from numxla.primitives import shape_ops as so
from numxla.primitives.indexing import GatherDimensionNumbers, ScatterDimensionNumbers
from numxla.tracer.core import abstractify

from .rules import Zero, batch_rules, bdim_size, const_like, instantiate, is_zero, jvp_rules, \
    linear_jvp, move_batch_dim, register_non_differentiable, shift_axes, vjp_rules, \
    zeros_like_aval


# -- linear JVPs of the ops linear in all their operands ------------------------

for _p in (so.broadcast_p, so.broadcast_in_dim_p, so.reshape_p, so.collapse_p,
           so.transpose_p, so.rev_p, so.slice_p, so.pad_p, so.concatenate_p):
    jvp_rules[_p] = linear_jvp(_p)


# -- broadcast / broadcast_in_dim -------------------------------------------------

def _broadcast_vjp(ct, fwd, x, *, sizes):
    """New major dimensions are summed away."""
    return (lax.reduce_sum(ct, tuple(range(len(sizes)))),)


def _broadcast_batch(args, dims, *, sizes):
    (x,), (d,) = args, dims
    return so.broadcast_p.bind(x, sizes=sizes), d + len(sizes)


def _broadcast_in_dim_vjp(ct, fwd, x, *, shape, broadcast_dimensions):
    """Sum over the new dimensions and the stretched size-1 ones, then a
    reshape puts the size-1 dimensions back."""
    xdims = abstractify(x).dimensions
    stretched = {b for b, n in zip(broadcast_dimensions, xdims) if n == 1 and shape[b] != 1}
    axes = tuple(i for i in range(len(shape))
                 if i not in broadcast_dimensions or i in stretched)
    return (lax.reshape(lax.reduce_sum(ct, axes), xdims),)


def _broadcast_in_dim_batch(args, dims, *, shape, broadcast_dimensions):
    """The batch goes right after the result dimension of the operand
    dimension before it, so that ``broadcast_dimensions`` stay increasing."""
    (x,), (d,) = args, dims
    size = abstractify(x).dimensions[d]
    at = broadcast_dimensions[d - 1] + 1 if d > 0 else 0
    new_shape = shape[:at] + (size,) + shape[at:]
    bdims = shift_axes(broadcast_dimensions, at)
    bdims = bdims[:d] + (at,) + bdims[d:]
    return so.broadcast_in_dim_p.bind(x, shape=new_shape, broadcast_dimensions=bdims), at


vjp_rules[so.broadcast_p] = _broadcast_vjp
batch_rules[so.broadcast_p] = _broadcast_batch
vjp_rules[so.broadcast_in_dim_p] = _broadcast_in_dim_vjp
batch_rules[so.broadcast_in_dim_p] = _broadcast_in_dim_batch


# -- reshape / collapse -------------------------------------------------------------

def _reshape_back(ct, fwd, x, **params):
    """Both keep the row-major element order: the transpose is a reshape back."""
    return (lax.reshape(ct, abstractify(x).dimensions),)


def _reshape_batch(args, dims, *, new_sizes):
    (x,), (d,) = args, dims
    size = abstractify(x).dimensions[d]
    x = move_batch_dim(x, d, 0, size)
    return so.reshape_p.bind(x, new_sizes=(size,) + new_sizes), 0


def _collapse_batch(args, dims, *, dimensions):
    """The batch stays where it is unless it lies inside the collapsed run."""
    (x,), (d,) = args, dims
    if d <= dimensions[0]:
        return so.collapse_p.bind(x, dimensions=shift_axes(dimensions, d)), d
    if d > dimensions[-1]:
        return so.collapse_p.bind(x, dimensions=dimensions), d - len(dimensions) + 1
    x = move_batch_dim(x, d, 0, abstractify(x).dimensions[d])
    return so.collapse_p.bind(x, dimensions=shift_axes(dimensions, 0)), 0


vjp_rules[so.reshape_p] = _reshape_back
batch_rules[so.reshape_p] = _reshape_batch
vjp_rules[so.collapse_p] = _reshape_back
batch_rules[so.collapse_p] = _collapse_batch


# -- transpose / rev ------------------------------------------------------------------

def _transpose_vjp(ct, fwd, x, *, permutation):
    return (lax.transpose(ct, tuple(int(i) for i in np.argsort(permutation))),)


def _transpose_batch(args, dims, *, permutation):
    """The batch dimension leads the result."""
    (x,), (d,) = args, dims
    perm = (d,) + shift_axes(permutation, d)
    return so.transpose_p.bind(x, permutation=perm), 0


vjp_rules[so.transpose_p] = _transpose_vjp
batch_rules[so.transpose_p] = _transpose_batch
vjp_rules[so.rev_p] = lambda ct, fwd, x, *, dimensions: (lax.rev(ct, dimensions),)
batch_rules[so.rev_p] = lambda args, dims, *, dimensions: (
    so.rev_p.bind(args[0], dimensions=shift_axes(dimensions, dims[0])), dims[0])


# -- slice / pad -------------------------------------------------------------------------

def _slice_vjp(ct, fwd, x, *, start_indices, limit_indices, strides):
    """A pad of the cotangent with zeros: ``start`` low, the rest high, the
    stride's gaps as interior padding."""
    config = []
    for start, stride, n, size in zip(start_indices, strides, abstractify(ct).dimensions,
                                      abstractify(x).dimensions):
        used = (n - 1) * stride + 1 if n else 0
        config.append((start, size - start - used, stride - 1))
    return (lax.pad(ct, const_like(ct, 0), config),)


def _slice_batch(args, dims, *, start_indices, limit_indices, strides):
    (x,), (d,) = args, dims
    size = abstractify(x).dimensions[d]
    return so.slice_p.bind(x, start_indices=start_indices[:d] + (0,) + start_indices[d:],
                           limit_indices=limit_indices[:d] + (size,) + limit_indices[d:],
                           strides=strides[:d] + (1,) + strides[d:]), d


def _pad_vjp(ct, fwd, x, padding_value, *, padding_config):
    """The operand's cotangent: the cotangent padded by the negated edges
    (cuts what was added, zero-fills what was cut), then a strided slice
    skips the interior padding.  The padding value's: the sum of the
    cotangent over the padded positions (all minus the operand's)."""
    unpad = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    unpadded = lax.pad(ct, const_like(ct, 0), unpad)
    ct_x = lax.slice(unpadded, (0,) * len(unpad), abstractify(unpadded).dimensions,
                     tuple(i + 1 for _, _, i in padding_config))
    ct_pv = None
    if fwd.wants[1]:
        every = tuple(range(len(padding_config)))
        ct_pv = lax.sub(lax.reduce_sum(ct, every), lax.reduce_sum(ct_x, every))
    return (ct_x if fwd.wants[0] else None, ct_pv)


def _pad_batch(args, dims, *, padding_config):
    """A batched padding value: pad with zeros, then select it into the
    padded positions (a padded mask of ``True`` tells them apart)."""
    (x, pv), (d, dpv) = args, dims
    size = bdim_size(args, dims)
    if d is None:
        x, d = move_batch_dim(x, None, 0, size), 0
    config = padding_config[:d] + ((0, 0, 0),) + padding_config[d:]
    if dpv is None:
        return so.pad_p.bind(x, pv, padding_config=config), d
    padded = so.pad_p.bind(x, const_like(x, 0), padding_config=config)
    ones = lax.broadcast_in_dim(np.array(True), abstractify(x).dimensions, ())
    mask = so.pad_p.bind(ones, np.array(False), padding_config=config)
    fill = lax.broadcast_in_dim(pv, abstractify(padded).dimensions, (d,))
    return lax.select(mask, padded, fill), d


vjp_rules[so.slice_p] = _slice_vjp
batch_rules[so.slice_p] = _slice_batch
vjp_rules[so.pad_p] = _pad_vjp
batch_rules[so.pad_p] = _pad_batch


# -- concatenate ---------------------------------------------------------------------------

def _concatenate_vjp(ct, fwd, *xs, dimension):
    """Each operand's cotangent is its slice of the cotangent."""
    out, start = [], 0
    for x, want in zip(xs, fwd.wants):
        n = abstractify(x).dimensions[dimension]
        out.append(lax.slice_in_dim(ct, start, start + n, axis=dimension) if want else None)
        start += n
    return tuple(out)


def _concatenate_batch(args, dims, *, dimension):
    size = bdim_size(args, dims)
    moved = [move_batch_dim(x, d, 0, size) for x, d in zip(args, dims)]
    return so.concatenate_p.bind(*moved, dimension=dimension + 1), 0


vjp_rules[so.concatenate_p] = _concatenate_vjp
batch_rules[so.concatenate_p] = _concatenate_batch


# -- dynamic_slice / dynamic_update_slice -------------------------------------------------

def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *starts = primals
    out = so.dynamic_slice_p.bind(x, *starts, slice_sizes=slice_sizes)
    if is_zero(tangents[0]):
        return out, Zero(abstractify(out))
    return out, so.dynamic_slice_p.bind(tangents[0], *starts, slice_sizes=slice_sizes)


def _dynamic_slice_vjp(ct, fwd, x, *starts, slice_sizes):
    """The cotangent written into zeros where the slice was read (both ops
    clamp the start indices the same way)."""
    zeros = zeros_like_aval(abstractify(x))
    return (so.dynamic_update_slice_p.bind(zeros, ct, *starts),) + (None,) * len(starts)


def _dynamic_update_slice_jvp(primals, tangents):
    out = so.dynamic_update_slice_p.bind(*primals)
    tx, tu = tangents[:2]
    if is_zero(tx) and is_zero(tu):
        return out, Zero(abstractify(out))
    return out, so.dynamic_update_slice_p.bind(instantiate(tx), instantiate(tu), *primals[2:])


def _dynamic_update_slice_vjp(ct, fwd, x, update, *starts):
    """The operand gets the cotangent with the updated window zeroed; the
    update gets the window (a dynamic_slice of the cotangent)."""
    upd = abstractify(update)
    ct_x = ct_u = None
    if fwd.wants[0]:
        ct_x = so.dynamic_update_slice_p.bind(ct, zeros_like_aval(upd), *starts)
    if fwd.wants[1]:
        ct_u = so.dynamic_slice_p.bind(ct, *starts, slice_sizes=upd.dimensions)
    return (ct_x, ct_u) + (None,) * len(starts)


def _index_vectors(starts, sdims, size):
    """The start indices as a ``(batch, rank)`` array (XLA's index vectors)."""
    cols = [lax.reshape(move_batch_dim(s, d, 0, size), (size, 1)) for s, d in zip(starts, sdims)]
    return lax.concatenate(cols, 1)


def _dynamic_slice_batch(args, dims, *, slice_sizes):
    """Unbatched starts: one more full dimension in the slice.  Batched
    starts: a gather of one slice per batch element (the operand's batch,
    if any, as a batching dimension), which clamps as dynamic_slice does."""
    (x, *starts), (dx, *sdims) = args, dims
    size = bdim_size(args, dims)
    if all(d is None for d in sdims):
        zero = const_like(starts[0], 0) if starts else np.int32(0)
        starts = starts[:dx] + [zero] + starts[dx:]
        sizes = slice_sizes[:dx] + (size,) + slice_sizes[dx:]
        return so.dynamic_slice_p.bind(x, *starts, slice_sizes=sizes), dx
    indices = _index_vectors(starts, sdims, size)
    rank = len(slice_sizes)
    offsets = tuple(range(1, rank + 1))
    if dx is None:
        dn = GatherDimensionNumbers(offset_dims=offsets, collapsed_slice_dims=(),
                                    start_index_map=tuple(range(rank)))
        sizes = slice_sizes
    else:
        x = move_batch_dim(x, dx, 0, size)
        dn = GatherDimensionNumbers(offset_dims=offsets, collapsed_slice_dims=(),
                                    start_index_map=offsets, operand_batching_dims=(0,),
                                    start_indices_batching_dims=(0,))
        sizes = (1,) + slice_sizes
    return lax.gather(x, indices, dn, sizes), 0


def _dynamic_update_slice_batch(args, dims):
    """Unbatched starts: one more full dimension in the update.  Batched
    starts: a scatter (replace) of one window per batch element, its
    indices clamped first as dynamic_update_slice clamps them (Scatter
    would skip a window that does not fit)."""
    (x, update, *starts), (dx, du, *sdims) = args, dims
    size = bdim_size(args, dims)
    x = move_batch_dim(x, dx, 0, size)
    update = move_batch_dim(update, du, 0, size)
    if all(d is None for d in sdims):
        zero = const_like(starts[0], 0) if starts else np.int32(0)
        return so.dynamic_update_slice_p.bind(x, update, zero, *starts), 0
    indices = _index_vectors(starts, sdims, size)
    rank = len(starts)
    window = tuple(range(1, rank + 1))
    dn = ScatterDimensionNumbers(update_window_dims=window, inserted_window_dims=(),
                                 scatter_dims_to_operand_dims=window,
                                 operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
    return lax.scatter(x, indices, update, dn, indices_are_sorted=True, unique_indices=True,
                       mode="clip"), 0


jvp_rules[so.dynamic_slice_p] = _dynamic_slice_jvp
vjp_rules[so.dynamic_slice_p] = _dynamic_slice_vjp
batch_rules[so.dynamic_slice_p] = _dynamic_slice_batch
jvp_rules[so.dynamic_update_slice_p] = _dynamic_update_slice_jvp
vjp_rules[so.dynamic_update_slice_p] = _dynamic_update_slice_vjp
batch_rules[so.dynamic_update_slice_p] = _dynamic_update_slice_batch


# -- iota / get_dimension_size / set_dimension_size --------------------------------------

register_non_differentiable(so.iota_p, so.get_dimension_size_p)


def _get_dimension_size_batch(args, dims, *, dimension):
    """Every batch element has the same sizes: the result is not batched."""
    (x,), (d,) = args, dims
    (phys,) = shift_axes((dimension,), d)
    return so.get_dimension_size_p.bind(x, dimension=phys), None


def _set_dimension_size_jvp(primals, tangents, *, dimension):
    """The tangent has the primal's dynamic size (as JAX's dynamic shapes)."""
    x, n = primals
    out = so.set_dimension_size_p.bind(x, n, dimension=dimension)
    return out, so.set_dimension_size_p.bind(tangents[0], n, dimension=dimension)


def _set_dimension_size_vjp(ct, fwd, x, n, *, dimension):
    """The cotangent inside the run-time size, zeros in the padding.  A
    dynamic cotangent is made static first (an op whose operands all have
    the result's bounds would cut to the run-time sizes, and adding it to a
    static cotangent would drop elements): it is written into zeros one
    element longer, then sliced back; a static cotangent is masked past
    ``n`` along ``dimension``."""
    aval = abstractify(x)
    dims = aval.dimensions
    index_t = abstractify(n).element_type
    grown = dims[:dimension] + (dims[dimension] + 1,) + dims[dimension + 1:]
    zero_index = const_like(n, 0)
    placed = so.dynamic_update_slice_p.bind(
        lax.broadcast_in_dim(const_like(x, 0), grown, ()), ct, *([zero_index] * aval.ndim))
    placed = lax.slice(placed, (0,) * aval.ndim, dims)
    inside = lax.lt(lax.broadcasted_iota(index_t, dims, dimension),
                    lax.broadcast_in_dim(n, dims, ()))
    return (lax.select(inside, placed, zeros_like_aval(aval)), None)


def _set_dimension_size_batch(args, dims, *, dimension):
    """A batched size would give each batch element its own dynamic size,
    which one array cannot have: refused."""
    (x, n), (d, dn) = args, dims
    if dn is not None:
        raise NotImplementedError("set_dimension_size: vmap over the size (one dynamic size "
                                  "per batch element) has no batched form")
    (phys,) = shift_axes((dimension,), d)
    return so.set_dimension_size_p.bind(x, n, dimension=phys), d


batch_rules[so.get_dimension_size_p] = _get_dimension_size_batch
jvp_rules[so.set_dimension_size_p] = _set_dimension_size_jvp
vjp_rules[so.set_dimension_size_p] = _set_dimension_size_vjp
batch_rules[so.set_dimension_size_p] = _set_dimension_size_batch
