"""JVP, VJP and batching rules of the reductions (primitives/reductions.py).

* ``reduce_sum`` is linear: its VJP broadcasts the cotangent back.
* ``reduce_prod`` differentiates, as JAX does, a tree of pairwise products
  (the reduced elements halved until one is left), so that zeros in the
  operand need no division.
* ``reduce_max``/``reduce_min`` send the tangent (cotangent) of a result to
  the operand elements equal to it, split equally among ties (JAX's rule).
* ``reduce`` (the general, variadic one): a computation that is a single
  ``add``/``mul``/``max``/``min`` is the matching shortcut over the operand
  with the init value appended to each reduced row, and uses its rules;
  other computations have no derivative rule (as in JAX).
* ``argmax``/``argmin`` and the bitwise reductions have no derivative.

All of them batch by reducing the shifted dimensions; ``reduce`` with
batched init values puts them in front of the reduced rows (a lifted
computation tells them apart), and loops only over a batched value its
computation captured.
"""
from __future__ import annotations

import numpy as np

import numxla.primitives as lax
from numxla.primitives import reductions as red
from numxla.tracer.core import abstractify
from numxla.tracer.graph import eval_graph

from .rules import Forward, batch_by_loop, batch_rules, bdim_size, const_like, convert_like, \
    instantiate, jvp_rules, linear_jvp, move_batch_dim, register_non_differentiable, shift_axes, \
    vjp_rules


def _kept(x, axes):
    return tuple(d for d in range(abstractify(x).ndim) if d not in axes)


def _expand(y, x, axes):
    """``y`` (a result over ``axes``) broadcast back to ``x``'s shape."""
    return lax.broadcast_in_dim(y, abstractify(x).dimensions, _kept(x, axes))


# -- reduce_sum ------------------------------------------------------------------------

def _sum_vjp(ct, fwd, x, *, axes):
    return (_expand(ct, x, axes),)


jvp_rules[red.reduce_sum_p] = linear_jvp(red.reduce_sum_p)
vjp_rules[red.reduce_sum_p] = _sum_vjp


# -- reduce_prod -------------------------------------------------------------------------

def _product_tree(x, *, axes):
    """The product over ``axes`` as pairwise products: the reduced elements
    are flattened into a leading dimension that is halved (padded with a 1
    when odd) until one row is left.  Differentiable with zeros present."""
    kept = _kept(x, axes)
    dims = abstractify(x).dimensions
    n = int(np.prod([dims[a] for a in axes], dtype=np.int64))
    rest = tuple(dims[d] for d in kept)
    rows = lax.reshape(x, (n,) + rest, tuple(axes) + kept)
    one = const_like(x, 1)
    if n == 0:
        return lax.broadcast_in_dim(one, rest, ())
    while n > 1:
        half = (n + 1) // 2
        first = lax.slice_in_dim(rows, 0, half)
        second = lax.slice_in_dim(rows, half, n)
        if n - half != half:
            second = lax.pad(second, one, ((0, 1, 0),) + ((0, 0, 0),) * len(rest))
        rows, n = lax.mul(first, second), half
    return lax.reshape(rows, rest)


def _prod_jvp(primals, tangents, *, axes):
    from .forward import jvp
    (x,), (t,) = primals, tangents
    out = red.reduce_prod_p.bind(x, axes=axes)
    _, t_out = jvp(lambda v: _product_tree(v, axes=axes), (x,), (instantiate(t),))
    return out, t_out


def _prod_vjp(ct, fwd, x, *, axes):
    from .reverse import vjp
    _, pullback = vjp(lambda v: _product_tree(v, axes=axes), x)
    return pullback(ct)


jvp_rules[red.reduce_prod_p] = _prod_jvp
vjp_rules[red.reduce_prod_p] = _prod_vjp


# -- reduce_max / reduce_min ---------------------------------------------------------------

def _chosen(x, out, axes):
    """Where ``x`` equals its reduction result (1.0) and one over how many
    elements of each reduced row do (the equal share of a tie; an empty
    row counts one, so that its zero tangent is not 0 / 0)."""
    one = const_like(x, 1)
    at = convert_like(lax.eq(x, _expand(out, x, axes)), x)
    share = lax.div(one, lax.max(red.reduce_sum_p.bind(at, axes=axes), one))
    return at, share


def _chooser_rules(prim):
    def jvp(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        out = prim.bind(x, axes=axes)
        at, share = _chosen(x, out, axes)
        return out, lax.mul(red.reduce_sum_p.bind(lax.mul(instantiate(t), at), axes=axes), share)

    def vjp(ct, fwd, x, *, axes):
        at, share = _chosen(x, fwd.out, axes)
        return (lax.mul(_expand(lax.mul(ct, share), x, axes), at),)

    jvp_rules[prim] = jvp
    vjp_rules[prim] = vjp


_chooser_rules(red.reduce_max_p)
_chooser_rules(red.reduce_min_p)

register_non_differentiable(red.reduce_and_p, red.reduce_or_p, red.reduce_xor_p,
                            red.argmax_p, red.argmin_p)


# -- batching of the shortcuts and argmax/argmin ---------------------------------------------

def _batch_over_shifted_axes(prim):
    """Reduce the operand's logical axes at their physical positions; the
    batch dimension moves down past the reduced axes before it."""
    def rule(args, dims, *, axes, **params):
        (x,), (d,) = args, dims
        phys = shift_axes(axes, d)
        return prim.bind(x, axes=phys, **params), d - sum(1 for a in phys if a < d)
    batch_rules[prim] = rule


for _p in (*red.SHORTCUT_PRIMITIVES.values(), red.argmax_p, red.argmin_p):
    _batch_over_shifted_axes(_p)


# -- reduce (general) ------------------------------------------------------------------------

# the shortcut whose rules a single-op computation uses
_MONOID_SHORTCUTS = {"add": red.reduce_sum_p, "mul": red.reduce_prod_p,
                     "max": red.reduce_max_p, "min": red.reduce_min_p}


def _monoid(computation, num_args):
    """The shortcut matching ``computation`` if it is a single add/mul/max/min
    of its two parameters over one operand; otherwise NotImplementedError."""
    prim = red.single_binary_op(computation)
    if num_args == 2 and prim is not None and prim.name in _MONOID_SHORTCUTS:
        return _MONOID_SHORTCUTS[prim.name]
    raise NotImplementedError(
        f"reduce: differentiation of a general reduction is not defined (computation "
        f"{computation.name!r}: {len(computation.equations)} equation(s)); only a single "
        f"add, mul, max or min has a rule, as in JAX")


def _with_init_row(x, init, dimensions):
    """``x`` with the reduced dimensions flattened last and ``init`` appended
    to each row: reducing that last dimension is the reduce with ``init``.
    Linear in ``(x, init)``."""
    kept = _kept(x, dimensions)
    dims = abstractify(x).dimensions
    rest = tuple(dims[d] for d in kept)
    n = int(np.prod([dims[a] for a in dimensions], dtype=np.int64))
    rows = lax.reshape(x, rest + (n,), kept + tuple(dimensions))
    return lax.concatenate([rows, lax.broadcast_in_dim(init, rest + (1,), ())], len(rest))


def _reduce_jvp(primals, tangents, *, computation, dimensions):
    shortcut = _monoid(computation, len(primals))
    x, init = primals
    out = red.reduce_p.bind(x, init, computation=computation, dimensions=dimensions)
    tx, tinit = (instantiate(t) for t in tangents)
    rows = _with_init_row(x, init, dimensions)
    last = (abstractify(rows).ndim - 1,)
    _, t_out = jvp_rules[shortcut]((rows,), (_with_init_row(tx, tinit, dimensions),), axes=last)
    return out, (t_out,)


def _reduce_vjp(cts, fwd, *args, computation, dimensions):
    """The shortcut's VJP over the rows with the init value, then the
    transpose of :func:`_with_init_row` (slices and a reshape back)."""
    shortcut = _monoid(computation, len(args))
    x, init = args
    rows = _with_init_row(x, init, dimensions)
    last = abstractify(rows).ndim - 1
    (ct_rows,) = vjp_rules[shortcut](instantiate(cts[0]), Forward(fwd.out[0], (True,)), rows,
                                     axes=(last,))
    n = abstractify(rows).dimensions[last] - 1
    ct_x = ct_init = None
    if fwd.wants[0]:
        kept = _kept(x, dimensions)
        order = kept + tuple(dimensions)
        flat = lax.slice_in_dim(ct_rows, 0, n, axis=last)
        dims = abstractify(x).dimensions
        ct_x = lax.transpose(lax.reshape(flat, tuple(dims[d] for d in order)),
                             tuple(int(i) for i in np.argsort(order)))
    if fwd.wants[1]:
        ct_init = red.reduce_sum_p.bind(lax.slice_in_dim(ct_rows, n, n + 1, axis=last),
                                        axes=tuple(range(last + 1)))
    return ct_x, ct_init


def _reduce_batch(args, dims, *, computation, dimensions):
    """Batched operands: reduce the shifted dimensions (the operands' batch
    dimensions aligned first).  Batched init values: see
    :func:`_reduce_with_batched_inits`.  A batched captured value (the
    computation closes over it and takes it whole) has no batched form: a
    loop over the batch (``map_sequential``)."""
    n = len(computation.out_avals)
    size = bdim_size(args, dims)
    if any(d is not None for d in dims[2 * n:]):
        return batch_by_loop(red.reduce_p, args, dims, computation=computation,
                             dimensions=dimensions)
    if any(d is not None for d in dims[n:2 * n]):
        return _reduce_with_batched_inits(args, dims, size, computation, dimensions), (0,) * n
    d = next(d for d in dims[:n] if d is not None)
    operands = [move_batch_dim(x, dx, d, size) for x, dx in zip(args[:n], dims[:n])]
    phys = shift_axes(dimensions, d)
    outs = red.reduce_p.bind(*operands, *args[n:], computation=computation, dimensions=phys)
    return outs, (d - sum(1 for a in phys if a < d),) * n


def _reduce_with_batched_inits(args, dims, size, computation, dimensions):
    """Init values vary over the batch, but Reduce takes scalar ones: each
    init value becomes the first element of its reduced rows, and a boolean
    operand (``False`` only in the new init value) marks an accumulator that
    holds nothing yet.  The lifted computation returns the other side when
    one side is empty, else the computation's result, so the first step
    gives the init value and the next ``computation(init, x0)``: one
    batched reduce, for any computation."""
    n = len(computation.out_avals)
    operands = [move_batch_dim(x, d, 0, size) for x, d in zip(args[:n], dims[:n])]
    extras = args[2 * n:]
    phys = shift_axes(dimensions, 0)
    kept = _kept(operands[0], phys)
    full = abstractify(operands[0]).dimensions
    rest = tuple(full[k] for k in kept)
    m = int(np.prod([full[a] for a in phys], dtype=np.int64))
    rows = []
    for x, init, d in zip(operands, args[n:2 * n], dims[n:2 * n]):
        first = lax.broadcast_in_dim(move_batch_dim(init, d, 0, size), rest + (1,), (0,))
        rows.append(lax.concatenate([first, lax.reshape(x, rest + (m,), kept + phys)],
                                    len(rest)))
    present = lax.broadcast_in_dim(np.array(True), rest + (m + 1,), ())
    empty = [const_like(x, 0) for x in operands] + [np.array(False)]

    def lifted(acc, x):
        *a, a_has = acc
        *b, b_has = x
        both = eval_graph(computation, *a, *b, *extras)
        outs = [lax.select(a_has, lax.select(b_has, c, ai), bi) for c, ai, bi in zip(both, a, b)]
        return (*outs, lax.bitwise_or(a_has, b_has))

    outs = lax.reduce((*rows, present), tuple(empty), lifted, (len(rest),))
    return tuple(outs[:n])


jvp_rules[red.reduce_p] = _reduce_jvp
vjp_rules[red.reduce_p] = _reduce_vjp
batch_rules[red.reduce_p] = _reduce_batch
