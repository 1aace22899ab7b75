"""JVP, VJP and batching rules of DotGeneral and Conv (primitives/dot_conv.py).

Both ops are bilinear: the tangent is ``op(t_lhs, rhs) + op(lhs, t_rhs)``
and each operand's cotangent is the same op applied to the cotangent and
the other operand.  For ``dot_general`` that is a ``dot_general`` over the
dimensions the forward op kept (then a transpose into the operand's
dimension order); for ``conv_general_dilated`` it is a convolution of the
cotangent with the reversed kernel (lhs) or of the input with the cotangent
(rhs), with strides and dilations exchanged, as XLA's and JAX's conv
backprop.  ``precision`` and ``preferred_element_type`` are kept on every
op the rules emit; cotangents are converted back to the operand's type.

Batching never loops: ``dot_general`` gets one more batch dimension (both
operands batched) or one more free dimension (one batched);
``conv_general_dilated`` folds the vmapped dimension into the batch (lhs
batched), the output features (rhs batched) or the feature / batch groups
(both batched).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

import numxla.primitives as lax
from numxla.primitives.dot_conv import ConvDimensionNumbers, conv_general_dilated_p, dot_general_p
from numxla.primitives.elementwise import promote
from numxla.tracer.core import abstractify, array_value

from .rules import Zero, add_tangents, batch_rules, bdim_size, convert_like, is_zero, jvp_rules, \
    shift_axes, vjp_rules, zeros_like_aval

__all__ = []


# --------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------

def _bilinear_jvp(prim):
    """``op(t_lhs, rhs) + op(lhs, t_rhs)``, skipping symbolic zero tangents."""
    def rule(primals, tangents, **params):
        lhs, rhs = primals
        t_lhs, t_rhs = tangents
        out = prim.bind(lhs, rhs, **params)
        t_out = Zero(abstractify(out))
        if not is_zero(t_lhs):
            t_out = add_tangents(t_out, prim.bind(t_lhs, rhs, **params))
        if not is_zero(t_rhs):
            t_out = add_tangents(t_out, prim.bind(lhs, t_rhs, **params))
        return out, t_out
    return rule


def _common_type(ct: Any, other: Any) -> tuple[Any, Any]:
    """The cotangent (in the result type, e.g. a wider ``preferred_element_type``)
    and the other operand converted to one element type, as the ops need."""
    if abstractify(ct).element_type is abstractify(other).element_type:
        return ct, other
    return tuple(promote(ct, other))


def _argsort(seq: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(seq, kind="stable"))


# --------------------------------------------------------------------------
# DotGeneral
# --------------------------------------------------------------------------

def _free(rank: int, *used: Sequence[int]) -> list[int]:
    taken = {d for group in used for d in group}
    return [d for d in range(rank) if d not in taken]


def _dot_transpose(ct, other, operand, *, own, others, operand_is_lhs, precision,
                   preferred_element_type):
    """The cotangent of one operand of ``dot_general``: ``ct`` (batch, lhs
    free, rhs free) contracted with ``other`` over the other operand's free
    dimensions, batched over the batch dimensions, then transposed into the
    operand's dimension order if it is not already in it.  ``own``/``others``
    are the (contracting, batch) dimensions of the operand and of the other."""
    (own_c, own_b), (other_c, other_b) = own, others
    own_free = _free(abstractify(operand).ndim, own_c, own_b)
    other_free = _free(abstractify(other).ndim, other_c, other_b)
    nb = len(own_b)
    first = nb if not operand_is_lhs else nb + len(own_free)   # the other's free dims in ct
    ct_other = tuple(range(first, first + len(other_free)))
    ct, other = _common_type(ct, other)
    # (ct, other) gives (batch, own free, own contracting in the other's
    # order); (other, ct) gives (batch, own contracting, own free): take the
    # order that needs no transpose when there is one (dW = x^T ct for x @ W).
    contract_order = [own_c[i] for i in _argsort(other_c)]
    ct_first = list(own_b) + own_free + contract_order
    other_first = list(own_b) + contract_order + own_free
    kw = dict(precision=precision, preferred_element_type=preferred_element_type)
    if other_first == sorted(other_first) and ct_first != sorted(ct_first):
        dims = ((tuple(other_free), ct_other), (tuple(other_b), tuple(range(nb))))
        out = dot_general_p.bind(other, ct, dimension_numbers=dims, **kw)
        order = other_first
    else:
        dims = ((ct_other, tuple(other_free)), (tuple(range(nb)), tuple(other_b)))
        out = dot_general_p.bind(ct, other, dimension_numbers=dims, **kw)
        order = ct_first
    if order != sorted(order):
        out = lax.transpose(out, _argsort(order))
    return convert_like(out, operand)


def _dot_general_vjp(ct, fwd, lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None):
    """DotGeneral's VJP is two DotGenerals (XLA has no other op for it)."""
    (lc, rc), (lb, rb) = dimension_numbers
    kw = dict(precision=precision, preferred_element_type=preferred_element_type)
    ct_lhs = ct_rhs = None
    if fwd.wants[0]:
        ct_lhs = _dot_transpose(ct, rhs, lhs, own=(lc, lb), others=(rc, rb),
                                operand_is_lhs=True, **kw)
    if fwd.wants[1]:
        ct_rhs = _dot_transpose(ct, lhs, rhs, own=(rc, rb), others=(lc, lb),
                                operand_is_lhs=False, **kw)
    return ct_lhs, ct_rhs


def _dot_general_batch(args, dims, *, dimension_numbers, precision=None,
                       preferred_element_type=None):
    """One DotGeneral: the vmapped dimensions become a new leading batch
    dimension when both operands are batched (the result's dimension 0);
    otherwise the batched operand's vmapped dimension is one more free
    dimension, found at its place among that operand's free dimensions."""
    lhs, rhs = args
    ld, rd = dims
    (lc, rc), (lb, rb) = dimension_numbers
    lc, lb, rc, rb = shift_axes(lc, ld), shift_axes(lb, ld), shift_axes(rc, rd), shift_axes(rb, rd)
    if ld is not None and rd is not None:
        lb, rb = (ld,) + lb, (rd,) + rb
        out_dim = 0
    elif ld is not None:
        out_dim = len(lb) + _free(abstractify(lhs).ndim, lc, lb).index(ld)
    else:
        lhs_free = _free(abstractify(lhs).ndim, lc, lb)
        out_dim = len(lb) + len(lhs_free) + _free(abstractify(rhs).ndim, rc, rb).index(rd)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)),
                             precision=precision, preferred_element_type=preferred_element_type)
    return out, out_dim


jvp_rules[dot_general_p] = _bilinear_jvp(dot_general_p)
vjp_rules[dot_general_p] = _dot_general_vjp
batch_rules[dot_general_p] = _dot_general_batch


# --------------------------------------------------------------------------
# Conv
# --------------------------------------------------------------------------

def _dilate(size: int, factor: int) -> int:
    return 0 if size == 0 else 1 + factor * (size - 1)


def _split_axis(x: Any, axis: int, outer: int) -> Any:
    """Dimension ``axis`` of size ``outer * n`` as two dimensions ``(outer, n)``."""
    shape = list(abstractify(x).dimensions)
    shape[axis:axis + 1] = [outer, shape[axis] // outer]
    return lax.reshape(x, shape)


def _merge_axis(x: Any, src: int, dst: int) -> Any:
    """Dimension ``src`` folded into dimension ``dst`` (numbered without
    ``src``) as its major part: ``(.., s, .., d, ..)`` -> ``(.., s * d, ..)``."""
    aval = abstractify(x)
    perm = [i for i in range(aval.ndim) if i != src]
    perm.insert(dst, src)
    x = lax.transpose(x, perm)
    shape = [aval.dimensions[p] for p in perm]
    shape[dst:dst + 2] = [shape[dst] * shape[dst + 1]]
    return lax.reshape(x, shape)


def _spec_swap(spec: Sequence[int]) -> tuple[int, ...]:
    """A spec with its first two entries (batch/feature, or out/in feature) exchanged."""
    return (spec[1], spec[0]) + tuple(spec[2:])


def _conv_lhs_padding(in_sizes, window_sizes, out_sizes, *, window_strides, padding,
                      lhs_dilation, rhs_dilation):
    """Padding of the (stride-dilated) cotangent so that the reversed kernel,
    moved by ``lhs_dilation``, reaches base element ``b`` exactly from the
    outputs whose windows read it: low ``window - 1 - pad_low``; high makes
    the result as large as the input."""
    pads = []
    for s, k, o, st, (lo, _), ld, rd in zip(in_sizes, window_sizes, out_sizes, window_strides,
                                           padding, lhs_dilation, rhs_dilation):
        before = _dilate(k, rd) - 1 - lo
        after = _dilate(s, ld) + _dilate(k, rd) - 1 - _dilate(o, st) - before
        pads.append((before, after))
    return tuple(pads)


def _conv_rhs_padding(in_sizes, window_sizes, out_sizes, *, window_strides, padding,
                      lhs_dilation, rhs_dilation):
    """Padding of the input for the kernel's cotangent: the forward low
    padding; the high padding gives exactly one result per kernel tap."""
    pads = []
    for s, k, o, st, (lo, _), ld, rd in zip(in_sizes, window_sizes, out_sizes, window_strides,
                                           padding, lhs_dilation, rhs_dilation):
        pads.append((lo, _dilate(o, st) + _dilate(k, rd) - 1 - _dilate(s, ld) - lo))
    return tuple(pads)


def _conv_vjp_lhs(ct, rhs, lhs, sizes, *, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count, precision,
                  preferred_element_type):
    """The input's cotangent: the cotangent convolved with the kernel reversed
    in space and with its feature dimensions exchanged; the forward strides
    become the lhs dilation and the lhs dilation the strides.  Feature (and
    batch) groups move the group from the kernel's output features to its
    input features and convolve with ``feature_group_count`` groups.
    ``sizes``: the spatial sizes of the input, the kernel and the result."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    kernel = rhs
    if groups > 1:
        kernel = _merge_axis(_split_axis(kernel, rhs_spec[0], groups), rhs_spec[0], rhs_spec[1])
    kernel = lax.rev(kernel, rhs_spec[2:])
    pads = _conv_lhs_padding(*sizes, window_strides=window_strides, padding=padding,
                             lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation)
    ct, kernel = _common_type(ct, kernel)
    out = conv_general_dilated_p.bind(
        ct, kernel, window_strides=lhs_dilation, padding=pads, lhs_dilation=window_strides,
        rhs_dilation=rhs_dilation,
        dimension_numbers=ConvDimensionNumbers(out_spec, _spec_swap(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, precision=precision,
        preferred_element_type=preferred_element_type)
    if batch_group_count > 1:   # (batch, groups * features) -> (groups * batch, features)
        out = _merge_axis(_split_axis(out, lhs_spec[1], batch_group_count),
                          lhs_spec[1], lhs_spec[0])
    return convert_like(out, lhs)


def _conv_vjp_rhs(ct, lhs, rhs, sizes, *, window_strides, padding, lhs_dilation, rhs_dilation,
                  dimension_numbers, feature_group_count, batch_group_count, precision,
                  preferred_element_type):
    """The kernel's cotangent: the input convolved with the cotangent, the
    input's batch being the contracted feature and its features the batch;
    strides and rhs dilation exchange.  Feature groups become batch groups
    and batch groups feature groups."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pads = _conv_rhs_padding(*sizes, window_strides=window_strides, padding=padding,
                             lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation)
    ct, x = _common_type(ct, lhs)
    out = conv_general_dilated_p.bind(
        x, ct, window_strides=rhs_dilation, padding=pads, lhs_dilation=lhs_dilation,
        rhs_dilation=window_strides,
        dimension_numbers=ConvDimensionNumbers(_spec_swap(lhs_spec), _spec_swap(out_spec),
                                               _spec_swap(rhs_spec)),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        precision=precision, preferred_element_type=preferred_element_type)
    return convert_like(out, rhs)


def _conv_vjp(ct, fwd, lhs, rhs, **params):
    """Conv's VJP is two convolutions (XLA's conv backprop to input and filter)."""
    if abstractify(ct).size == 0:   # no output element: nothing flows back
        return tuple(zeros_like_aval(abstractify(x)) if want else None
                     for x, want in zip((lhs, rhs), fwd.wants))
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    sizes = tuple([abstractify(x).dimensions[d] for d in spec[2:]]
                  for x, spec in ((lhs, lhs_spec), (rhs, rhs_spec), (ct, out_spec)))
    return (_conv_vjp_lhs(ct, rhs, lhs, sizes, **params) if fwd.wants[0] else None,
            _conv_vjp_rhs(ct, lhs, rhs, sizes, **params) if fwd.wants[1] else None)


def _conv_batch(args, dims, *, dimension_numbers, feature_group_count, batch_group_count,
                **params):
    """One Conv with the vmapped dimension (size B) folded into one of its own:

    * lhs only: into the batch, N -> (B, N) (inside each batch group, which
      must stay major);
    * rhs only: into the output features, O -> (B, O) (inside each feature
      or batch group);
    * both: into the input features with ``B`` times the feature groups (or
      into the batch with ``B`` times the batch groups) and into the output
      features, so each vmapped element is its own group.
    """
    lhs, rhs = args
    ld, rd = dims
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    fg, bg = feature_group_count, batch_group_count
    size = bdim_size(args, dims)
    if size == 0:   # no group count can hold an empty batch: the (empty) result directly
        return _empty_conv_batch(args, dims, dimension_numbers=dimension_numbers,
                                 feature_group_count=fg, batch_group_count=bg, **params), 0
    if ld is not None and rd is not None:
        if bg > 1:
            lhs, bg = _merge_axis(lhs, ld, lhs_spec[0]), bg * size
        else:
            lhs, fg = _merge_axis(lhs, ld, lhs_spec[1]), fg * size
        rhs = _merge_axis(rhs, rd, rhs_spec[0])
        out = _conv(lhs, rhs, dimension_numbers, fg, bg, params)
        return _split_axis(out, out_spec[1], size), out_spec[1]
    if ld is not None:
        lhs = _fold_inside_groups(lhs, ld, lhs_spec[0], bg)
        out = _conv(lhs, rhs, dimension_numbers, fg, bg, params)
        return _split_axis(out, out_spec[0], size), out_spec[0]
    groups = max(fg, bg)
    rhs = _fold_inside_groups(rhs, rd, rhs_spec[0], groups)
    out = _conv(lhs, rhs, dimension_numbers, fg, bg, params)
    if groups == 1:
        return _split_axis(out, out_spec[1], size), out_spec[1]
    # features (groups, B, O / groups) -> (B, O)
    out = _split_axis(_split_axis(out, out_spec[1], groups), out_spec[1] + 1, size)
    return _merge_axis(out, out_spec[1], out_spec[1] + 1), out_spec[1]


def _empty_conv_batch(args, dims, **params):
    """Zeros of the result's shape with a leading vmapped dimension of size 0."""
    avals = [abstractify(x) for x in args]
    avals = [a if d is None else
             array_value(a.element_type, a.dimensions[:d] + a.dimensions[d + 1:])
             for a, d in zip(avals, dims)]
    (out,) = conv_general_dilated_p.abstract_eval(*avals, **params)
    return zeros_like_aval(array_value(out.element_type, (0,) + out.dimensions))


def _fold_inside_groups(x: Any, bdim: int, target: int, groups: int) -> Any:
    """Batched dimension ``bdim`` folded into ``target`` (unbatched numbering)
    below its ``groups`` major groups: target (G, n) -> (G, B * n)."""
    if groups == 1:
        return _merge_axis(x, bdim, target)
    at = target + (1 if bdim <= target else 0)        # target in the batched numbering
    x = _split_axis(x, at, groups)                    # ... G, n ...
    bdim = bdim + (1 if bdim > at else 0)
    x = _merge_axis(x, bdim, target + 1)              # ... G, B * n ...
    return _merge_axis(x, target, target)             # ... G * B * n ...


def _conv(lhs, rhs, dimension_numbers, fg, bg, params):
    return conv_general_dilated_p.bind(lhs, rhs, dimension_numbers=dimension_numbers,
                                       feature_group_count=fg, batch_group_count=bg, **params)


jvp_rules[conv_general_dilated_p] = _bilinear_jvp(conv_general_dilated_p)
vjp_rules[conv_general_dilated_p] = _conv_vjp
batch_rules[conv_general_dilated_p] = _conv_batch
