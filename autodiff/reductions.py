"""JVP, VJP and batching rules of the reductions (primitives/reductions.py)."""
from __future__ import annotations

import primitives as lax
from primitives import reductions as red
from tracer.core import abstractify

from .rules import batch_rules, jvp_rules, linear_jvp, vjp_rules


def _sum_vjp(ct, fwd, x, *, axes):
    aval = abstractify(x)
    kept = tuple(d for d in range(aval.ndim) if d not in axes)
    return (lax.broadcast_in_dim(ct, aval.dimensions, kept),)


jvp_rules[red.reduce_sum_p] = linear_jvp(red.reduce_sum_p)
vjp_rules[red.reduce_sum_p] = _sum_vjp


def _sum_batch(args, dims, *, axes):
    (x,), (d,) = args, dims
    # the operand's logical dimension k is physical k (+1 at or after d)
    phys = tuple(a + (1 if a >= d else 0) for a in axes)
    out = red.reduce_sum_p.bind(x, axes=phys)
    return out, d - sum(1 for a in phys if a < d)


batch_rules[red.reduce_sum_p] = _sum_batch
