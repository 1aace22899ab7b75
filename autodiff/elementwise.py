"""JVP, VJP and batching rules of the element-wise ops (primitives/elementwise.py).

The derivative tables give, per op, ``d out / d operand_i`` as a function of
the operands and the result; JVP and VJP rules are both built from them
(tangent times partial; cotangent times partial).  Element-wise ops batch by
moving every batch dimension to the front (broadcasting unbatched operands).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import primitives as lax
from primitives import elementwise as ew
from tracer.core import abstractify

from .rules import Zero, add_tangents, batch_rules, bdim_size, instantiate, is_zero, jvp_rules, \
    move_batch_dim, register_non_differentiable, vjp_rules

__all__ = ["define_partials", "batch_elementwise"]


def _const(x: Any, value: float) -> Any:
    """``value`` as a scalar of ``x``'s dtype (weakly typed ops keep ``x``'s type)."""
    return np.asarray(value, abstractify(x).dtype)


def define_partials(prim, *partials: Callable[..., Any] | None) -> None:
    """Register the JVP and VJP rules of an element-wise op from its partial
    derivatives: ``partials[i](out, *operands)`` is ``d out / d operand_i``
    (``None``: the op is constant in that operand)."""

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        t_out = Zero(abstractify(out))
        for partial, t in zip(partials, tangents):
            if partial is None or is_zero(t):
                continue
            t_out = add_tangents(t_out, lax.mul(t, partial(out, *primals, **params)))
        return out, t_out

    def vjp(ct, fwd, *primals, **params):
        return tuple(lax.mul(ct, partial(fwd.out, *primals, **params))
                     if partial is not None and want else None
                     for partial, want in zip(partials, fwd.wants))

    jvp_rules[prim] = jvp
    vjp_rules[prim] = vjp


# -- linear ops --------------------------------------------------------------

def _add_jvp(primals, tangents):
    return lax.add(*primals), add_tangents(*tangents)


def _sub_jvp(primals, tangents):
    tx, ty = tangents
    out = lax.sub(*primals)
    if is_zero(ty):
        return out, tx
    return out, lax.sub(instantiate(tx), ty)


jvp_rules[ew.add_p] = _add_jvp
vjp_rules[ew.add_p] = lambda ct, fwd, x, y: (ct, ct)
jvp_rules[ew.sub_p] = _sub_jvp
vjp_rules[ew.sub_p] = lambda ct, fwd, x, y: (ct, lax.neg(ct))
jvp_rules[ew.neg_p] = lambda primals, tangents: (lax.neg(primals[0]), lax.neg(tangents[0]))
vjp_rules[ew.neg_p] = lambda ct, fwd, x: (lax.neg(ct),)

define_partials(ew.mul_p, lambda out, x, y: y, lambda out, x, y: x)

# -- transcendental ops --------------------------------------------------------

define_partials(ew.sin_p, lambda out, x: lax.cos(x))
define_partials(ew.cos_p, lambda out, x: lax.neg(lax.sin(x)))
define_partials(ew.tanh_p, lambda out, x: lax.sub(_const(out, 1), lax.mul(out, out)))
define_partials(ew.exp_p, lambda out, x: out)
define_partials(ew.log_p, lambda out, x: lax.div(_const(x, 1), x))

# -- ops with no derivative ---------------------------------------------------

register_non_differentiable(ew.compare_p, ew.and_p, ew.or_p, ew.xor_p, ew.not_p,
                            ew.is_finite_p)


# -- batching -------------------------------------------------------------------

def batch_elementwise(prim):
    """Batch an element-wise op: every operand's batch dimension moved to the
    front (unbatched operands broadcast), the op applied once."""
    def rule(args, dims, **params):
        size = bdim_size(args, dims)
        moved = [move_batch_dim(x, d, 0, size) for x, d in zip(args, dims)]
        out = prim.bind(*moved, **params)
        return out, ((0,) * len(out) if prim.multiple_results else 0)
    batch_rules[prim] = rule
    return rule


for _prim in (*ew.UNARY_PRIMITIVES.values(), *ew.BINARY_PRIMITIVES.values(), ew.round_p,
              ew.compare_p, ew.select_p, ew.clamp_p, ew.convert_element_type_p):
    batch_elementwise(_prim)


# -- type conversion and selection -------------------------------------------------

def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = ew.convert_element_type_p.bind(x, new_dtype=new_dtype)
    if not (new_dtype.is_floating or new_dtype.is_complex):
        return out, Zero(abstractify(out))
    return out, ew.convert_element_type_p.bind(t, new_dtype=new_dtype)


def _convert_vjp(ct, fwd, x, *, new_dtype):
    return (ew.convert_element_type_p.bind(ct, new_dtype=abstractify(x).element_type),)


jvp_rules[ew.convert_element_type_p] = _convert_jvp
vjp_rules[ew.convert_element_type_p] = _convert_vjp


def _select_jvp(primals, tangents):
    pred, on_true, on_false = primals
    out = ew.select_p.bind(*primals)
    _, t_true, t_false = tangents
    if is_zero(t_true) and is_zero(t_false):
        return out, Zero(abstractify(out))
    return out, ew.select_p.bind(pred, instantiate(t_true, abstractify(on_true)),
                                 instantiate(t_false, abstractify(on_false)))


def _select_vjp(ct, fwd, pred, on_true, on_false):
    zeros = instantiate(None, abstractify(ct))
    return (None,
            ew.select_p.bind(pred, ct, zeros) if fwd.wants[1] else None,
            ew.select_p.bind(pred, zeros, ct) if fwd.wants[2] else None)


jvp_rules[ew.select_p] = _select_jvp
vjp_rules[ew.select_p] = _select_vjp
