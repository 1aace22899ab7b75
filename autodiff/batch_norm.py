"""JVP, VJP and batching rules of batch normalisation (primitives/batch_norm.py).

With ``xc = x - mu`` and ``inv = 1 / sqrt(var + epsilon)`` per feature, and
sums over every dimension but ``feature_index`` (``N`` elements):

* ``batch_norm_training``'s VJP is XLA's ``batch_norm_grad`` for the
  cotangent of the output, plus ``ct_mu / N + 2 ct_var xc / N`` for the
  cotangents of the batch statistics; its JVP is the closed form
  ``scale inv (tx - mean(tx) - xc inv^2 mean(xc tx)) + tscale xc inv + toffset``
  (``tvar = 2 mean(xc tx)``).
* ``batch_norm_inference`` is an element-wise formula of its five operands:
  closed-form JVP and VJP.
* ``batch_norm_grad`` (second order): its formula (the module docstring of
  primitives/batch_norm.py) written with element-wise ops and reductions is
  differentiated by the transforms themselves.

vmap: the statistics are per batch element, so the batch dimension is
folded into the feature dimension (moved next to it and merged by a
reshape; per-feature operands become ``batch * features`` vectors), one op
runs, and the results are split again.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import numxla.primitives as lax
from numxla.primitives import batch_norm as bn
from numxla.tracer.core import abstractify

from .forward import jvp_flat
from .reverse import vjp_flat
from .rules import Zero, add_tangents, batch_rules, bdim_size, instantiate, is_zero, \
    jvp_rules, move_batch_dim, scalar_like, shift_axes, vjp_rules

__all__ = []


# -- per-feature helpers ------------------------------------------------------------------

class _Layout:
    """Broadcasts and reductions between per-feature vectors and the operand."""

    def __init__(self, x: Any, feature_index: int):
        self.aval = aval = abstractify(x)
        self.dims, self.axis = aval.dimensions, feature_index
        self.others = tuple(d for d in range(aval.ndim) if d != feature_index)
        self.count = int(np.prod([self.dims[d] for d in self.others], dtype=np.int64))

    def col(self, v: Any) -> Any:
        """A per-feature vector broadcast along the feature dimension."""
        return lax.broadcast_in_dim(v, self.dims, (self.axis,))

    def sum(self, x: Any) -> Any:
        return lax.reduce_sum(x, self.others)

    def mean(self, x: Any) -> Any:
        return lax.div(self.sum(x), scalar_like(self.aval, self.count))

    def inv_std(self, var: Any, epsilon: float) -> Any:
        return lax.rsqrt(lax.add(var, scalar_like(self.aval, epsilon)))


# -- batch_norm_training ------------------------------------------------------------------

def _training_jvp(primals, tangents, *, epsilon, feature_index):
    (x, scale, offset), (tx, tscale, toffset) = primals, tangents
    y, mu, var = bn.batch_norm_training_p.bind(x, scale, offset, epsilon=epsilon,
                                               feature_index=feature_index)
    f = _Layout(x, feature_index)
    inv = f.inv_std(var, epsilon)
    xc = lax.sub(x, f.col(mu))
    stats = abstractify(mu)
    ty, tmu, tvar = Zero(abstractify(y)), Zero(stats), Zero(stats)
    if not is_zero(tx):
        tmu = f.mean(tx)
        tvar = lax.mul(scalar_like(f.aval, 2), f.mean(lax.mul(xc, tx)))
        # scale inv (tx - tmu) - scale inv^3 tvar / 2 xc
        half = lax.mul(lax.mul(inv, inv), lax.mul(scalar_like(f.aval, 0.5), tvar))
        inner = lax.sub(lax.sub(tx, f.col(tmu)), lax.mul(xc, f.col(half)))
        ty = lax.mul(f.col(lax.mul(scale, inv)), inner)
    if not is_zero(tscale):
        ty = add_tangents(ty, lax.mul(xc, f.col(lax.mul(tscale, inv))))
    if not is_zero(toffset):
        ty = add_tangents(ty, f.col(toffset))
    return (y, mu, var), (ty, tmu, tvar)


def _training_vjp(cts, fwd, x, scale, offset, *, epsilon, feature_index):
    """``batch_norm_grad`` for the output's cotangent; the statistics'
    cotangents are added element-wise (``d mu = 1/N``, ``d var = 2 xc / N``)."""
    ct_y, ct_mu, ct_var = cts
    _, mu, var = fwd.out
    f = _Layout(x, feature_index)
    dx = dscale = doffset = None
    if not is_zero(ct_y):
        dx, dscale, doffset = bn.batch_norm_grad_p.bind(
            x, scale, mu, var, ct_y, epsilon=epsilon, feature_index=feature_index)
    if fwd.wants[0]:
        if not is_zero(ct_mu):
            dx = add_tangents(dx, f.col(lax.div(ct_mu, scalar_like(f.aval, f.count))))
        if not is_zero(ct_var):
            xc = lax.sub(x, f.col(mu))
            two_over_n = scalar_like(f.aval, 2 / f.count)
            dx = add_tangents(dx, lax.mul(xc, f.col(lax.mul(ct_var, two_over_n))))
    return tuple(c if want else None for c, want in zip((dx, dscale, doffset), fwd.wants))


jvp_rules[bn.batch_norm_training_p] = _training_jvp
vjp_rules[bn.batch_norm_training_p] = _training_vjp


# -- batch_norm_inference -----------------------------------------------------------------

def _inference_jvp(primals, tangents, *, epsilon, feature_index):
    (x, scale, _, mean, var), (tx, tscale, toffset, tmean, tvar) = primals, tangents
    y = bn.batch_norm_inference_p.bind(*primals, epsilon=epsilon, feature_index=feature_index)
    f = _Layout(x, feature_index)
    inv = f.inv_std(var, epsilon)
    scale_inv = lax.mul(scale, inv)
    xc = lax.sub(x, f.col(mean))
    # d y = scale inv (tx - tmean) + xc (tscale inv - scale inv^3 tvar / 2) + toffset
    centred = tx if is_zero(tmean) else lax.sub(instantiate(tx), f.col(tmean))
    ty = Zero(abstractify(y)) if is_zero(centred) else lax.mul(f.col(scale_inv), centred)
    per_feature = tscale if is_zero(tscale) else lax.mul(tscale, inv)
    if not is_zero(tvar):
        dvar = lax.mul(lax.mul(scale_inv, lax.mul(inv, inv)),
                       lax.mul(scalar_like(f.aval, -0.5), tvar))
        per_feature = add_tangents(per_feature, dvar)
    if not is_zero(per_feature):
        ty = add_tangents(ty, lax.mul(xc, f.col(per_feature)))
    if not is_zero(toffset):
        ty = add_tangents(ty, f.col(toffset))
    return y, ty


def _inference_vjp(ct, fwd, x, scale, offset, mean, var, *, epsilon, feature_index):
    f = _Layout(x, feature_index)
    inv = f.inv_std(var, epsilon)
    scale_inv = lax.mul(scale, inv)
    xc = lax.sub(x, f.col(mean))
    sum_ct = f.sum(ct)
    sum_ct_xc = f.sum(lax.mul(ct, xc))
    wants = fwd.wants
    return (lax.mul(ct, f.col(scale_inv)) if wants[0] else None,
            lax.mul(sum_ct_xc, inv) if wants[1] else None,
            sum_ct if wants[2] else None,
            lax.neg(lax.mul(sum_ct, scale_inv)) if wants[3] else None,
            lax.mul(lax.mul(sum_ct_xc, lax.mul(scale_inv, lax.mul(inv, inv))),
                    scalar_like(f.aval, -0.5)) if wants[4] else None)


jvp_rules[bn.batch_norm_inference_p] = _inference_jvp
vjp_rules[bn.batch_norm_inference_p] = _inference_vjp


# -- batch_norm_grad ------------------------------------------------------------------------

def _grad_formula(epsilon: float, feature_index: int) -> Callable[..., list[Any]]:
    """``batch_norm_grad`` written with element-wise ops and reductions."""
    def formula(x, scale, mean, var, dy):
        f = _Layout(x, feature_index)
        inv = f.inv_std(var, epsilon)
        xc = lax.sub(x, f.col(mean))
        sum_dy_xc = f.sum(lax.mul(dy, xc))
        c = lax.mul(lax.div(sum_dy_xc, scalar_like(f.aval, f.count)), lax.mul(inv, inv))
        d = f.mean(dy)
        inner = lax.sub(lax.sub(dy, f.col(d)), lax.mul(f.col(c), xc))
        return [lax.mul(f.col(lax.mul(scale, inv)), inner), lax.mul(sum_dy_xc, inv), f.sum(dy)]
    return formula


def _grad_jvp(primals, tangents, *, epsilon, feature_index):
    out = bn.batch_norm_grad_p.bind(*primals, epsilon=epsilon, feature_index=feature_index)
    _, t_out = jvp_flat(_grad_formula(epsilon, feature_index), primals, tangents)
    return out, tuple(t_out)


def _grad_vjp(cts, fwd, *primals, epsilon, feature_index):
    _, pullback = vjp_flat(_grad_formula(epsilon, feature_index), primals)
    return tuple(None if not want or is_zero(c) else c
                 for c, want in zip(pullback(list(cts)), fwd.wants))


jvp_rules[bn.batch_norm_grad_p] = _grad_jvp
vjp_rules[bn.batch_norm_grad_p] = _grad_vjp


# -- batching ---------------------------------------------------------------------------------

def _fold(x: Any, dim: int | None, feature_index: int, size: int) -> Any:
    """``x`` with the batch merged into its feature dimension (batch-major)."""
    x = move_batch_dim(x, dim, feature_index, size)
    dims = abstractify(x).dimensions
    merged = dims[:feature_index] + (size * dims[feature_index + 1],) + dims[feature_index + 2:]
    return lax.reshape(x, merged)


def _unfold(y: Any, feature_index: int, size: int) -> Any:
    """The inverse of :func:`_fold`: the batch split out at ``feature_index``."""
    dims = abstractify(y).dimensions
    split = dims[:feature_index] + (size, dims[feature_index] // size) + dims[feature_index + 1:]
    return lax.reshape(y, split)


def _folding_batch(prim, operand_args: tuple[int, ...]) -> Callable[..., Any]:
    """Batch by folding: ``operand_args`` have the operand's shape, the rest
    are per-feature vectors; results of the operand's shape come back batched
    at ``feature_index``, per-feature ones at 0."""
    def rule(args, dims, *, epsilon, feature_index):
        size = bdim_size(args, dims)
        folded = [_fold(a, d, feature_index if i in operand_args else 0, size)
                  for i, (a, d) in enumerate(zip(args, dims))]
        outs = prim.bind(*folded, epsilon=epsilon, feature_index=feature_index)
        outs = outs if prim.multiple_results else (outs,)
        out_dims = (feature_index,) + (0,) * (len(outs) - 1)
        split = tuple(_unfold(o, d, size) for o, d in zip(outs, out_dims))
        return (split, out_dims) if prim.multiple_results else (split[0], out_dims[0])
    return rule


_inference_fold = _folding_batch(bn.batch_norm_inference_p, (0,))


def _inference_batch(args, dims, *, epsilon, feature_index):
    """A batched operand with unbatched statistics: the batch is one more
    normalised dimension.  Otherwise fold."""
    if all(d is None for d in dims[1:]):
        d = dims[0]
        (shifted,) = shift_axes((feature_index,), d)
        return bn.batch_norm_inference_p.bind(*args, epsilon=epsilon, feature_index=shifted), d
    return _inference_fold(args, dims, epsilon=epsilon, feature_index=feature_index)


batch_rules[bn.batch_norm_training_p] = _folding_batch(bn.batch_norm_training_p, (0,))
batch_rules[bn.batch_norm_inference_p] = _inference_batch
batch_rules[bn.batch_norm_grad_p] = _folding_batch(bn.batch_norm_grad_p, (0, 4))
