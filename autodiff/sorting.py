"""JVP, VJP and batching rules of Sort and TopK (primitives/sorting.py).

As JAX does: Sort is a permutation of its operands along ``dimension``, so
it sorts one more operand, an iota along that dimension, whose result is the
permutation; the tangents are gathered with it (a Gather with every other
dimension a batching dimension) and the cotangents scatter-added back.  A
comparator sub-graph is wrapped so that it takes (and ignores) the extra
operand.  TopK's tangents are gathered with its indices result (which has
no tangent).  Both batch by moving the batch to the front, out of the
sorted dimension; a comparator that closes over a batched value loops over
the batch.
"""
from __future__ import annotations

import weakref

import numpy as np

import numxla.primitives as lax
from numxla.primitives import sorting as so
from numxla.primitives._subgraph import trace_computation
from numxla.tracer.core import abstractify, array_value
from numxla.tracer.graph import eval_graph
from numxla.tracer.shapes import PrimitiveType as PT

from .indexing import scatter_add_along_axis, take_along_axis
from .rules import Zero, batch_at_front, batch_by_loop, batch_rules, bdim_size, is_zero, \
    jvp_rules, move_batch_dim, vjp_forward_rules, vjp_rules

_WRAPPED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _with_iota_comparator(comparator, n: int):
    """``comparator`` of ``n`` operands as one of ``n + 1`` that ignores the last."""
    if comparator is None:
        return None
    wrapped = _WRAPPED.get(comparator)
    if wrapped is None:
        avals = list(comparator.in_avals)
        s32 = array_value(PT.S32, ())
        in_avals = avals[:2 * n] + [s32, s32] + avals[2 * n:]

        def fn(*args):
            return eval_graph(comparator, *args[:2 * n], *args[2 * n + 2:])[0]

        comp = trace_computation(fn, in_avals, name=comparator.name)
        wrapped = _WRAPPED[comparator] = comp.graph
    return wrapped


def _num_operands(args, comparator) -> int:
    """The number of sorted operands (a comparator's captured values follow them)."""
    return len(args) if comparator is None else len(comparator.in_avals) - len(args)


def _sort_with_permutation(args, *, dimension, is_stable, num_keys, comparator):
    """The sorted operands and the permutation (s32) that sorts them."""
    n = _num_operands(args, comparator)
    operands, captured = args[:n], args[n:]
    aval = abstractify(operands[0])
    iota = lax.broadcasted_iota(np.int32, aval.dimensions, dimension)
    outs = so.sort_p.bind(*operands, iota, *captured, dimension=dimension, is_stable=is_stable,
                          num_keys=num_keys, comparator=_with_iota_comparator(comparator, n))
    return tuple(outs[:-1]), outs[-1], n


def _sort_jvp(primals, tangents, **params):
    outs, perm, n = _sort_with_permutation(primals, **params)
    dim = params["dimension"]
    t_outs = tuple(Zero(abstractify(o)) if is_zero(t) else take_along_axis(t, perm, dim)
                   for o, t in zip(outs, tangents[:n]))
    return outs, t_outs


def _sort_forward(*primals, **params):
    outs, perm, _ = _sort_with_permutation(primals, **params)
    return outs, perm


def _sort_vjp(cts, fwd, *primals, dimension, **params):
    perm = fwd.residuals
    cts_in = [scatter_add_along_axis(abstractify(x), perm, ct, dimension)
              if want and not is_zero(ct) else None
              for x, ct, want in zip(primals, cts, fwd.wants)]
    return (*cts_in, *[None] * (len(primals) - len(cts)))


jvp_rules[so.sort_p] = _sort_jvp
vjp_forward_rules[so.sort_p] = _sort_forward
vjp_rules[so.sort_p] = _sort_vjp


def _sort_batch(args, dims, *, dimension, comparator, **params):
    """The batch moved to the front of every operand, out of the sorted
    dimension.  A batched value the comparator closes over (and takes
    whole) has no batched form: a loop over the batch."""
    n = _num_operands(args, comparator)
    if any(d is not None for d in dims[n:]):
        return batch_by_loop(so.sort_p, args, dims, dimension=dimension, comparator=comparator,
                             **params)
    size = bdim_size(args, dims)
    moved = [move_batch_dim(x, d, 0, size) for x, d in zip(args[:n], dims[:n])]
    outs = so.sort_p.bind(*moved, *args[n:], dimension=dimension + 1, comparator=comparator,
                          **params)
    return outs, (0,) * n


batch_rules[so.sort_p] = _sort_batch


# -- top_k -----------------------------------------------------------------------------

def _top_k_jvp(primals, tangents, *, k, largest):
    (x,), (t,) = primals, tangents
    values, indices = so.top_k_p.bind(x, k=k, largest=largest)
    axis = abstractify(x).ndim - 1
    return (values, indices), (take_along_axis(t, indices, axis), Zero(abstractify(indices)))


def _top_k_vjp(cts, fwd, x, *, k, largest):
    ct = cts[0]
    if is_zero(ct):
        return (None,)
    aval = abstractify(x)
    return (scatter_add_along_axis(aval, fwd.out[1], ct, aval.ndim - 1),)


jvp_rules[so.top_k_p] = _top_k_jvp
vjp_rules[so.top_k_p] = _top_k_vjp
batch_rules[so.top_k_p] = batch_at_front(so.top_k_p)
