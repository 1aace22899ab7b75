"""JVP, VJP and batching rules of the element-wise ops (primitives/elementwise.py
and primitives/elementwise_bits.py).

Most ops are described by their partial derivatives (``define_partials``):
``d out / d operand_i`` as a function of the result and the operands; the
JVP multiplies tangents by them and the VJP cotangents, which for complex
(holomorphic) ops is the transpose under the real, non-conjugating inner
product that ``check_grads`` uses.  The rest (linear ops between real and
complex types, abs of complex, clamp, select, conversions) have their own
rules.  Conventions are JAX's: floor, ceil, round and sign have zero
derivatives; max and min split the derivative equally on ties; comparisons,
logical and bit-level ops are not differentiable.

Element-wise ops batch by moving every operand's batch dimension to where
the first batched full-rank operand has it (unbatched operands are
broadcast); the scalar bounds of clamp and the scalar predicate of select
stay scalars when they are not batched.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import numxla.primitives as lax
from numxla.primitives import elementwise as ew
from numxla.primitives import elementwise_bits as bits
from numxla.tracer.core import abstractify

from .rules import Zero, add_tangents, batch_rules, bdim_size, const_like, convert_like, \
    instantiate, is_zero, jvp_rules, linear_jvp, move_batch_dim, register_non_differentiable, \
    select_or_zero, vjp_rules, zeros_like_aval

__all__ = ["define_partials", "define_zero_derivative", "batch_elementwise"]


# -- helpers ---------------------------------------------------------------------

def _replace_zero(x: Any) -> Any:
    """``x`` with its zeros replaced by ones (a safe divisor or log argument)."""
    return lax.add(x, convert_like(lax.eq(x, const_like(x, 0)), x))


def _broadcast_to(x: Any, like: Any) -> Any:
    """A rank-0 ``x`` broadcast to the dimensions of ``like`` (unchanged otherwise)."""
    dims = abstractify(like).dimensions
    if abstractify(x).dimensions == dims:
        return x
    return lax.broadcast_in_dim(x, dims, ())


def _sum_to(x: Any, like: Any) -> Any:
    """The transpose of ``_broadcast_to``: ``x`` summed down to a rank-0 ``like``."""
    aval = abstractify(x)
    if aval.dimensions == abstractify(like).dimensions:
        return x
    return lax.reduce_sum(x, tuple(range(aval.ndim)))


# -- rule builders -------------------------------------------------------------------

def define_partials(prim, *partials: Callable[..., Any] | None) -> None:
    """Register the JVP and VJP rules of an element-wise op from its partial
    derivatives: ``partials[i](out, *operands, **params)`` is
    ``d out / d operand_i`` (``None``: the op is constant in that operand)."""

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


def define_zero_derivative(*prims) -> None:
    """Ops that are piecewise constant (floor, ceil, round, sign): a zero
    tangent (``Zero``) and no cotangent, as JAX's ``defjvp_zero``."""
    for prim in prims:
        def jvp(primals, tangents, _prim=prim, **params):
            out = _prim.bind(*primals, **params)
            return out, Zero(abstractify(out))
        jvp_rules[prim] = jvp
        vjp_rules[prim] = lambda ct, fwd, *primals, **params: (None,) * len(primals)


# -- linear ops --------------------------------------------------------------

def _add_jvp(primals, tangents):
    return lax.add(*primals), add_tangents(*tangents)


def _sub_jvp(primals, tangents):
    tx, ty = tangents
    out = lax.sub(*primals)
    if is_zero(ty):
        return out, tx
    if is_zero(tx):
        return out, lax.neg(ty)
    return out, lax.sub(tx, ty)


def _neg_jvp(primals, tangents):
    return lax.neg(primals[0]), lax.neg(tangents[0])


jvp_rules[ew.add_p] = _add_jvp
vjp_rules[ew.add_p] = lambda ct, fwd, x, y: (ct if fwd.wants[0] else None,
                                             ct if fwd.wants[1] else None)
jvp_rules[ew.sub_p] = _sub_jvp
vjp_rules[ew.sub_p] = lambda ct, fwd, x, y: (ct if fwd.wants[0] else None,
                                             lax.neg(ct) if fwd.wants[1] else None)
jvp_rules[ew.neg_p] = _neg_jvp
vjp_rules[ew.neg_p] = lambda ct, fwd, x: (lax.neg(ct),)

# reduce_precision is linear as JAX treats it: the tangent is rounded the same way.
jvp_rules[bits.reduce_precision_p] = linear_jvp(bits.reduce_precision_p)
vjp_rules[bits.reduce_precision_p] = lambda ct, fwd, x, **params: (
    bits.reduce_precision_p.bind(ct, **params),)


# -- between real and complex types ----------------------------------------------------
# With <a, b> = Re(sum a * b) (no conjugate): complex(x, y) transposes to
# (Re ct, -Im ct), Re to complex(ct, 0), Im to complex(0, -ct).

def _complex_vjp(ct, fwd, x, y):
    return (lax.real(ct) if fwd.wants[0] else None,
            lax.neg(lax.imag(ct)) if fwd.wants[1] else None)


def _real_vjp(ct, fwd, x):
    if not abstractify(x).element_type.is_complex:
        return (ct,)                                   # real of a real is the identity
    return (lax.complex(ct, const_like(ct, 0)),)


def _imag_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = lax.imag(x)
    if not abstractify(x).element_type.is_complex:
        return out, Zero(abstractify(out))             # imag of a real is constant 0
    return out, lax.imag(t)


def _imag_vjp(ct, fwd, x):
    if not abstractify(x).element_type.is_complex:
        return (None,)
    return (lax.complex(const_like(ct, 0), lax.neg(ct)),)


jvp_rules[ew.complex_p] = linear_jvp(ew.complex_p)
vjp_rules[ew.complex_p] = _complex_vjp
jvp_rules[ew.real_p] = linear_jvp(ew.real_p)
vjp_rules[ew.real_p] = _real_vjp
jvp_rules[ew.imag_p] = _imag_jvp
vjp_rules[ew.imag_p] = _imag_vjp


# -- abs -------------------------------------------------------------------------------
# Real: the derivative is sign(x), +1 at 0 (JAX's select(x >= 0, g, -g)).
# Complex: |z| is real; d|z| = Re(conj(z) dz) / |z| (|z| = 0 read as 1), whose
# transpose is ct * conj(z) / |z|.

def _abs_real_partial(out, x):
    return lax.sub(lax.mul(convert_like(lax.ge(x, const_like(x, 0)), x), const_like(x, 2)),
                   const_like(x, 1))


def _abs_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    out = lax.abs(x)
    if not abstractify(x).element_type.is_complex:
        return out, lax.mul(t, _abs_real_partial(out, x))
    r = _replace_zero(out)
    dot = lax.add(lax.mul(lax.real(t), lax.real(x)), lax.mul(lax.imag(t), lax.imag(x)))
    return out, lax.div(dot, r)


def _abs_vjp(ct, fwd, x):
    if not abstractify(x).element_type.is_complex:
        return (lax.mul(ct, _abs_real_partial(fwd.out, x)),)
    s = lax.div(ct, _replace_zero(fwd.out))
    return (lax.complex(lax.mul(s, lax.real(x)), lax.neg(lax.mul(s, lax.imag(x)))),)


jvp_rules[ew.abs_p] = _abs_jvp
vjp_rules[ew.abs_p] = _abs_vjp


# -- arithmetic ---------------------------------------------------------------------

def _balanced(x, out, y):
    """max/min's partial in ``x``: 1 where x is the result, halved on ties."""
    return lax.div(convert_like(lax.eq(x, out), out),
                   lax.add(const_like(out, 1), convert_like(lax.eq(y, out), out)))


def _pow_partial_x(out, x, y):
    """y * x^(y-1), and 0 where y = 0 (x^0 is constant, even at x = 0)."""
    at_zero = lax.eq(y, const_like(y, 0))
    safe = lax.mul(y, lax.pow(x, lax.sub(y, const_like(y, 1))))
    return lax.select(at_zero, zeros_like_aval(abstractify(out)), safe)


def _pow_partial_y(out, x, y):
    """log(x) * x^y, and 0 where x = 0 (JAX's log(_replace_zero(x)))."""
    return lax.mul(lax.log(_replace_zero(x)), out)


def _rem_partial_y(out, x, y):
    """-trunc(x / y): rem(x, y) = x - trunc(x / y) * y."""
    q = lax.div(x, y)
    return lax.neg(lax.mul(lax.sign(q), lax.floor(lax.abs(q))))


def _atan2_partial_x(out, x, y):
    """atan2(x, y) is the angle of (y, x): d/dx = y / (x^2 + y^2)."""
    return lax.div(y, lax.add(lax.mul(x, x), lax.mul(y, y)))


def _atan2_partial_y(out, x, y):
    """d/dy = -x / (x^2 + y^2)."""
    return lax.div(lax.neg(x), lax.add(lax.mul(x, x), lax.mul(y, y)))


define_partials(ew.mul_p, lambda out, x, y: y, lambda out, x, y: x)
define_partials(ew.div_p, lambda out, x, y: lax.div(const_like(y, 1), y),
                lambda out, x, y: lax.neg(lax.div(out, y)))
define_partials(ew.rem_p, lambda out, x, y: const_like(x, 1), _rem_partial_y)
define_partials(ew.pow_p, _pow_partial_x, _pow_partial_y)
define_partials(ew.max_p, lambda out, x, y: _balanced(x, out, y),
                lambda out, x, y: _balanced(y, out, x))
define_partials(ew.min_p, lambda out, x, y: _balanced(x, out, y),
                lambda out, x, y: _balanced(y, out, x))
define_partials(ew.atan2_p, _atan2_partial_x, _atan2_partial_y)


# -- transcendental ops (holomorphic for complex operands) ----------------------------------

_UNARY_PARTIALS: dict[Any, Callable[..., Any]] = {
    ew.sin_p: lambda out, x: lax.cos(x),
    ew.cos_p: lambda out, x: lax.neg(lax.sin(x)),
    ew.tan_p: lambda out, x: lax.add(const_like(out, 1), lax.mul(out, out)),
    ew.tanh_p: lambda out, x: lax.sub(const_like(out, 1), lax.mul(out, out)),
    ew.exp_p: lambda out, x: out,
    ew.expm1_p: lambda out, x: lax.add(out, const_like(out, 1)),
    ew.log_p: lambda out, x: lax.div(const_like(x, 1), x),
    ew.log1p_p: lambda out, x: lax.div(const_like(x, 1), lax.add(x, const_like(x, 1))),
    ew.logistic_p: lambda out, x: lax.mul(out, lax.sub(const_like(out, 1), out)),
    ew.sqrt_p: lambda out, x: lax.div(const_like(out, 0.5), out),
    ew.rsqrt_p: lambda out, x: lax.mul(const_like(out, -0.5), lax.div(out, x)),
    ew.cbrt_p: lambda out, x: lax.div(const_like(out, 1 / 3), lax.mul(out, out)),
    ew.erf_p: lambda out, x: lax.mul(const_like(x, 2 / np.sqrt(np.pi)),
                                     lax.exp(lax.neg(lax.mul(x, x)))),
}

for _prim, _partial in _UNARY_PARTIALS.items():
    define_partials(_prim, _partial)

define_zero_derivative(ew.floor_p, ew.ceil_p, ew.round_p, ew.sign_p)


# -- ops with no derivative ---------------------------------------------------

register_non_differentiable(
    ew.compare_p, ew.and_p, ew.or_p, ew.xor_p, ew.not_p, ew.is_finite_p,
    bits.shift_left_p, bits.shift_right_arithmetic_p, bits.shift_right_logical_p,
    bits.population_count_p, bits.clz_p, bits.bitcast_convert_type_p)


# -- type conversion, selection, clamp -------------------------------------------------

def _convert_jvp(primals, tangents, *, new_dtype):
    (x,), (t,) = primals, tangents
    out = ew.convert_element_type_p.bind(x, new_dtype=new_dtype)
    if not (new_dtype.is_floating or new_dtype.is_complex):
        return out, Zero(abstractify(out))
    return out, ew.convert_element_type_p.bind(t, new_dtype=new_dtype)


def _convert_vjp(ct, fwd, x, *, new_dtype):
    """Convert back (complex to real keeps the real part: the transpose of
    real to complex)."""
    if not fwd.wants[0]:
        return (None,)
    return (ew.convert_element_type_p.bind(ct, new_dtype=abstractify(x).element_type),)


jvp_rules[ew.convert_element_type_p] = _convert_jvp
vjp_rules[ew.convert_element_type_p] = _convert_vjp


def _select_jvp(primals, tangents):
    out = ew.select_p.bind(*primals)
    _, t_true, t_false = tangents
    if is_zero(t_true) and is_zero(t_false):
        return out, Zero(abstractify(out))
    return out, ew.select_p.bind(primals[0], instantiate(t_true), instantiate(t_false))


def _select_vjp(ct, fwd, pred, on_true, on_false):
    zeros = zeros_like_aval(abstractify(ct))
    return (None,
            ew.select_p.bind(pred, ct, zeros) if fwd.wants[1] else None,
            ew.select_p.bind(pred, zeros, ct) if fwd.wants[2] else None)


jvp_rules[ew.select_p] = _select_jvp
vjp_rules[ew.select_p] = _select_vjp


def _clamp_masks(lo, x, hi):
    """Where the result is ``lo``, ``x`` and ``hi`` as JAX differentiates
    clamp: ``lo`` where lo > x and lo < hi; ``x`` strictly inside; ``hi``
    where hi < x (ties get no derivative)."""
    return (lax.and_(lax.gt(lo, x), lax.lt(lo, hi)),
            lax.and_(lax.gt(x, lo), lax.lt(x, hi)),
            lax.lt(hi, x))


def _clamp_jvp(primals, tangents):
    out = ew.clamp_p.bind(*primals)
    masks = _clamp_masks(*primals)
    t_out = Zero(abstractify(out))
    for mask, t in zip(masks, tangents):
        if not is_zero(t):
            t_out = add_tangents(t_out, select_or_zero(mask, _broadcast_to(t, mask)))
    return out, t_out


def _clamp_vjp(ct, fwd, lo, x, hi):
    masks = _clamp_masks(lo, x, hi)
    return tuple(_sum_to(select_or_zero(mask, ct), operand) if want else None
                 for mask, operand, want in zip(masks, (lo, x, hi), fwd.wants))


jvp_rules[ew.clamp_p] = _clamp_jvp
vjp_rules[ew.clamp_p] = _clamp_vjp


# -- batching -------------------------------------------------------------------

def batch_elementwise(prim, scalar_operands: tuple[int, ...] = ()):
    """Batch an element-wise op: every operand's batch dimension moved to
    where the first batched full-rank operand has it (unbatched operands
    broadcast), the op applied once.  ``scalar_operands`` may be rank 0
    while the others are not (select's pred, clamp's bounds): unbatched,
    they stay scalars; batched, they are broadcast to the full shape."""
    def rule(args, dims, **params):
        size = bdim_size(args, dims)
        avals = [abstractify(x) for x in args]
        ranks = [a.ndim - (d is not None) for a, d in zip(avals, dims)]
        rank = max(ranks)
        full = next((i for i, r in enumerate(ranks) if r == rank and dims[i] is not None), None)
        to = dims[full] if full is not None else 0
        if full is not None:
            shape = avals[full].dimensions
        else:
            base = avals[ranks.index(rank)].dimensions
            shape = base[:to] + (size,) + base[to:]
        moved = []
        for i, (x, d) in enumerate(zip(args, dims)):
            if i in scalar_operands and ranks[i] < rank:
                moved.append(x if d is None else lax.broadcast_in_dim(x, shape, (to,)))
            else:
                moved.append(move_batch_dim(x, d, to, size))
        out = prim.bind(*moved, **params)
        return out, ((to,) * len(out) if prim.multiple_results else to)
    batch_rules[prim] = rule
    return rule


for _prim in (*ew.UNARY_PRIMITIVES.values(), *ew.BINARY_PRIMITIVES.values(), ew.round_p,
              ew.compare_p, ew.convert_element_type_p, bits.reduce_precision_p):
    batch_elementwise(_prim)
batch_elementwise(ew.select_p, scalar_operands=(0,))
batch_elementwise(ew.clamp_p, scalar_operands=(0, 2))


def _bitcast_batch(args, dims, *, new_dtype):
    """A narrower type adds a minor dimension and a wider one drops the last:
    the batch dimension stays where it is unless it is that last dimension."""
    (x,), (d,) = args, dims
    aval = abstractify(x)
    widening = new_dtype.numpy_dtype.itemsize > aval.dtype.itemsize   # PRED is a byte
    if widening and d == aval.ndim - 1:
        x, d = move_batch_dim(x, d, 0, aval.dimensions[d]), 0
    return bits.bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


batch_rules[bits.bitcast_convert_type_p] = _bitcast_batch
