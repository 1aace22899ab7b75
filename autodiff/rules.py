"""The rule tables of the transforms and the helpers rules share.

One table per concern, keyed by primitive (as ``tracer.core`` keeps
``abstract_eval_rules``); each op family registers its rules in its own
module of ``autodiff/`` (``autodiff/elementwise.py`` for the element-wise
ops, ...).

* ``jvp_rules[p](primals, tangents, **params) -> (primal_out, tangent_out)``
  Forward mode.  ``tangents`` holds :class:`Zero` for operands with no
  tangent; a rule returns ``Zero`` (or a tuple with ``Zero`` s, for ops with
  several results) where the tangent of a result is zero.
* ``vjp_rules[p](cts, fwd, *primals, **params) -> cotangents`` Reverse mode.
  ``cts`` is the cotangent of the result (a tuple, with ``Zero`` s, for ops
  with several results; a single-result op is never called with a zero
  cotangent); ``fwd`` (:class:`Forward`) holds the results of the forward
  op, which operands want a cotangent, and the residuals of a forward rule.
  The rule returns one cotangent per operand, ``None`` (or ``Zero``) where
  there is none.  XLA's own ops are the rules where XLA has them: the VJP
  of ``batch_norm_training`` is ``batch_norm_grad``, of a max
  ``reduce_window`` ``select_and_scatter``.
* ``vjp_forward_rules[p](*primals, **params) -> (outs, residuals)`` Optional:
  the forward pass of reverse mode runs this instead of the op when the
  backward pass needs more than the op's results (``scan`` stacks its
  per-iteration carries).
* ``batch_rules[p](args, dims, **params) -> (outs, out_dims)`` vmap.
  ``dims[i]`` is the batched dimension of ``args[i]`` (``None``: not
  batched); results say where their batch dimension is.

Ops with no derivative (integer ops, comparisons, rng, side effects) are
listed in ``non_differentiable``: their results carry no tangent and their
operands get no cotangent.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer.core import FLOAT0, AbstractValue, Primitive, abstractify, bf16_array
from numxla.tracer.shapes import PrimitiveType

__all__ = ["jvp_rules", "vjp_rules", "vjp_forward_rules", "batch_rules", "non_differentiable",
           "Zero", "Forward", "float0", "is_zero", "instantiate", "zeros_like_aval", "scalar_like",
           "add_tangents", "is_differentiable_type", "register_non_differentiable",
           "linear_jvp", "move_batch_dim", "bdim_size", "batch_by_loop", "const_like",
           "convert_like", "select_or_zero", "user_zero", "shift_axes", "batch_at_front"]

jvp_rules: dict[Primitive, Callable[..., Any]] = {}
vjp_rules: dict[Primitive, Callable[..., Any]] = {}
vjp_forward_rules: dict[Primitive, Callable[..., Any]] = {}
batch_rules: dict[Primitive, Callable[..., Any]] = {}
non_differentiable: set[Primitive] = set()

float0 = FLOAT0   # JAX's name for the tangent type of integers (no data at all)


@dataclasses.dataclass(frozen=True)
class Zero:
    """A symbolic zero tangent or cotangent of ``aval``'s shape: costs nothing
    until something needs it as an array (:func:`instantiate`)."""

    aval: AbstractValue

    def __repr__(self) -> str:
        return f"Zero({self.aval})"


@dataclasses.dataclass(frozen=True)
class Forward:
    """What a VJP rule knows about the forward op: its results (a tuple for
    ops with several results), which operands want a cotangent, and the
    residuals of a ``vjp_forward_rules`` entry (``None`` without one)."""

    out: Any
    wants: tuple[bool, ...]
    residuals: Any = None


def is_zero(t: Any) -> bool:
    return t is None or isinstance(t, Zero)


def is_differentiable_type(aval: AbstractValue) -> bool:
    """Float and complex arrays have tangents, and tuples holding one; integers,
    booleans, tokens do not."""
    if aval.shape.is_tuple:
        return any(is_differentiable_type(AbstractValue(s)) for s in aval.shape.tuple_shapes)
    t = aval.element_type
    return aval.shape.is_array and (t.is_floating or t.is_complex)


def scalar_like(aval: AbstractValue, value: complex) -> Any:
    """``value`` as a rank-0 constant of ``aval``'s element type (bf16 values
    are uint16 words in NumPy, so they go through ``bf16_array``)."""
    if aval.element_type is PrimitiveType.BF16:
        return bf16_array(np.float32(value))
    return np.asarray(value, aval.dtype)


def zeros_like_aval(aval: AbstractValue) -> Any:
    """An array of zeros of ``aval``'s type, built by the current interpreter
    (a broadcast of a scalar, so a traced graph holds no big constant)."""
    from numxla.primitives import broadcast_in_dim, create_token, tuple as make_tuple
    if aval.shape.is_tuple:
        return make_tuple([zeros_like_aval(AbstractValue(s)) for s in aval.shape.tuple_shapes])
    if aval.shape.is_token:
        return create_token()
    zero = scalar_like(aval, 0)
    if aval.ndim == 0:
        return zero
    return broadcast_in_dim(zero, aval.dimensions, ())


def instantiate(t: Any) -> Any:
    """``t`` as an array: a :class:`Zero` becomes zeros."""
    return zeros_like_aval(t.aval) if isinstance(t, Zero) else t


def const_like(x: Any, value: complex) -> Any:
    """``value`` as a rank-0 constant of ``x``'s element type (bf16 included)."""
    return scalar_like(abstractify(x), value)


def convert_like(x: Any, like: Any) -> Any:
    """``x`` (a mask, a cotangent of a wider type) converted to ``like``'s element type."""
    from numxla.primitives import convert_element_type
    target = abstractify(like).element_type
    return x if abstractify(x).element_type is target else convert_element_type(x, target)


def select_or_zero(mask: Any, x: Any) -> Any:
    """``x`` where ``mask`` holds, zero elsewhere."""
    from numxla.primitives import select
    return select(mask, x, zeros_like_aval(abstractify(x)))


def user_zero(primal: Any, t: Any) -> Any:
    """A tangent or cotangent as a transform hands it to the user: zeros for
    a symbolic zero, float0 zeros for an integer or boolean value."""
    aval = abstractify(primal)
    if not is_differentiable_type(aval):
        return np.zeros(aval.dimensions, float0)
    return instantiate(t)


def add_tangents(a: Any, b: Any) -> Any:
    """``a + b`` where either may be a symbolic zero."""
    if is_zero(a):
        return b
    if is_zero(b):
        return a
    from numxla.primitives import add, get_tuple_element, tuple as make_tuple
    aval = abstractify(a)
    if aval.shape.is_tuple:
        return make_tuple([add_tangents(get_tuple_element(a, i), get_tuple_element(b, i))
                           for i in range(len(aval.shape.tuple_shapes))])
    if aval.shape.is_token:
        return a
    return add(a, b)


def register_non_differentiable(*prims: Primitive) -> None:
    """Mark ops whose results carry no tangent (comparisons, integer ops, rng)."""
    non_differentiable.update(prims)


def linear_jvp(prim: Primitive) -> Callable[..., Any]:
    """The JVP rule of an op linear in all its operands: the tangent is the op
    applied to the tangents (zeros where an operand has none)."""
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any):
        out = prim.bind(*primals, **params)
        if all(is_zero(t) for t in tangents):
            return out, _zero_out(prim, out)
        t_out = prim.bind(*(instantiate(t) for t in tangents), **params)
        return out, t_out
    return rule


def _zero_out(prim: Primitive, out: Any) -> Any:
    if prim.multiple_results:
        return tuple(Zero(abstractify(o)) for o in out)
    return Zero(abstractify(out))


def shift_axes(axes: Sequence[int], bdim: int | None) -> tuple[int, ...]:
    """An unbatched operand's dimension numbers as dimensions of the operand
    with a batch dimension inserted at ``bdim`` (``None``: not batched)."""
    return tuple(axes) if bdim is None else tuple(a + (a >= bdim) for a in axes)


def batch_at_front(prim: Primitive) -> Callable[..., Any]:
    """The batching rule of an op that takes leading batch dimensions (FFT,
    Cholesky, TriangularSolve, TopK...): every operand's batch moved to 0."""
    def rule(args, dims, **params):
        size = bdim_size(args, dims)
        out = prim.bind(*(move_batch_dim(x, d, 0, size) for x, d in zip(args, dims)), **params)
        return out, ((0,) * len(out) if prim.multiple_results else 0)
    return rule


def bdim_size(args: Sequence[Any], dims: Sequence[int | None]) -> int:
    """The batch size: the size of the batched dimension of any batched operand."""
    for x, d in zip(args, dims):
        if d is not None:
            return abstractify(x).dimensions[d]
    raise ValueError("no operand is batched")


def move_batch_dim(x: Any, dim: int | None, to: int, size: int) -> Any:
    """``x`` with its batch dimension at ``to``: moved there by a transpose, or
    made by a broadcast when ``x`` is not batched (``dim is None``)."""
    from numxla.primitives import broadcast_in_dim, transpose
    aval = abstractify(x)
    if dim is None:
        shape = list(aval.dimensions)
        shape.insert(to, size)
        kept = tuple(i for i in range(len(shape)) if i != to)
        return broadcast_in_dim(x, tuple(shape), kept)
    if dim == to:
        return x
    perm = [i for i in range(aval.ndim) if i != dim]
    perm.insert(to, dim)
    return transpose(x, tuple(perm))


def batch_by_loop(prim: Primitive, args: Sequence[Any], dims: Sequence[int | None],
                  **params: Any) -> tuple[Any, Any]:
    """vmap by a sequential loop over the batch (a scan), for the few cases
    with no batched form (a custom call, a batched value an op takes only as
    a scalar or closes over); results are batched at 0."""
    from numxla.primitives import map_sequential
    size = bdim_size(args, dims)
    which = [i for i, d in enumerate(dims) if d is not None]
    xs = tuple(move_batch_dim(args[i], dims[i], 0, size) for i in which)

    def one(slices):
        full = list(args)
        for i, v in zip(which, slices):
            full[i] = v
        out = prim.bind(*full, **params)
        return tuple(out) if prim.multiple_results else out

    out = map_sequential(one, xs)
    return (tuple(out), (0,) * len(out)) if prim.multiple_results else (out, 0)
