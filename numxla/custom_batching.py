"""``jax.custom_batching``: functions with a ``vmap`` rule of their own.

``custom_vmap(fun)`` with ``@f.def_vmap`` on ``rule(axis_size, in_batched,
*args) -> (out, out_batched)``: under ``vmap``, ``f`` is not batched op by op
but by the rule, which gets the whole batch (batched arguments carry it on
axis 0; ``in_batched`` says, per argument, a pytree of bools, which do) and
says which outputs it batched (``out_batched``, a pytree of bools like
``out``; unbatched outputs are shared by every example).  Anywhere else
(eagerly, under ``jit``, under ``grad``/``jvp``) ``fun`` simply runs.

As ``autodiff/custom.py``'s rules, this is a primitive, ``custom_vmap_call``,
bound only while a ``vmap`` (possibly under ``grad``/``jvp``) maps one of the
arguments; its batching rule calls the user's rule.  Differentiating a bound
call (``vmap(grad(f))``, ``vmap(jvp(f))``) differentiates ``fun``, and keeps
the rule: the derivative is itself a ``custom_vmap`` call whose rule is the
derivative of the user's rule (JAX's construction for ``jvp``; JAX refuses
reverse mode, numxla transposes the same way).  ``grad`` of ``f`` outside
``vmap`` differentiates ``fun``'s ops, where JAX asks for a ``custom_jvp``.

``sequential_vmap(fun)``: a ``custom_vmap`` whose rule runs ``fun`` one
example at a time (``lax.map``), for functions that cannot be batched.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Sequence

from numxla.autodiff.batching import BatchInterpreter
from numxla.autodiff.forward import JVPInterpreter, jvp_flat
from numxla.autodiff.reverse import ReverseInterpreter, vjp_flat
from numxla.autodiff.rules import batch_rules, bdim_size, instantiate, jvp_rules, \
    move_batch_dim, vjp_forward_rules, vjp_rules
from numxla.tracer import pytree
from numxla.tracer.core import Primitive, abstractify, current_interpreter

__all__ = ["custom_vmap", "sequential_vmap"]

custom_vmap_call_p = Primitive("custom_vmap_call", multiple_results=True)


class _FlatVmap:
    """A function of flat leaves with a flat batching rule:
    ``fun(leaves) -> out leaves`` and ``rule(size, batched, leaves) ->
    (out leaves, out batched)``, batched leaves carrying the batch on axis 0."""

    def fun(self, leaves: Sequence[Any]) -> list[Any]:
        raise NotImplementedError

    def rule(self, size: int, batched: Sequence[bool], leaves: Sequence[Any]
             ) -> tuple[list[Any], list[bool]]:
        raise NotImplementedError


def _maps_an_argument(leaves: Sequence[Any]) -> bool:
    """Whether a ``vmap`` maps one of ``leaves``: the current interpreter is
    one that batches them, or differentiates values one does (seen through
    the ``grad``/``jvp`` interpreters above it)."""
    interpreter = current_interpreter()
    while isinstance(interpreter, (BatchInterpreter, JVPInterpreter, ReverseInterpreter)):
        if isinstance(interpreter, BatchInterpreter) and \
                any(interpreter.lift(x)[1] is not None for x in leaves):
            return True
        leaves = [interpreter.lift(x)[0] for x in leaves]
        interpreter = interpreter.parent
    return False


def _apply(flat: _FlatVmap, leaves: Sequence[Any]) -> list[Any]:
    if _maps_an_argument(leaves):
        return list(custom_vmap_call_p.bind(*leaves, flat=flat))
    return flat.fun(leaves)


# --------------------------------------------------------------------------
# the primitive: evaluation, shapes, batching, derivatives
# --------------------------------------------------------------------------

def _traced_avals(*avals: Any, flat: _FlatVmap) -> tuple:
    from numxla.tracer.tracing import trace_pytree
    graph, _ = trace_pytree(lambda *leaves: flat.fun(leaves), avals)
    return graph.out_avals


def _batch_rule(args: tuple, dims: tuple, *, flat: _FlatVmap) -> tuple[list, list]:
    """The user's rule on the batch (moved to axis 0), on the parent interpreter."""
    size = bdim_size(args, dims)
    leaves = [x if d is None else move_batch_dim(x, d, 0, size) for x, d in zip(args, dims)]
    outs, out_batched = flat.rule(size, [d is not None for d in dims], leaves)
    for out, batched in zip(outs, out_batched):
        shape = abstractify(out).dimensions
        if batched and (not shape or shape[0] != size):
            raise ValueError(f"custom_vmap: the vmap rule marked an output of shape {shape} "
                             f"as batched, but its leading axis is not the batch of {size}")
    return outs, [0 if b else None for b in out_batched]


def _all_batched(size: int, batched: Sequence[bool], leaves: Sequence[Any]) -> list[Any]:
    return [x if b else move_batch_dim(x, None, 0, size) for x, b in zip(leaves, batched)]


class _JVP(_FlatVmap):
    """``(primals, tangents) -> (outs, tangent outs)`` of ``inner``; its rule
    is the JVP of ``inner``'s rule (primals and tangents batched alike)."""

    def __init__(self, inner: _FlatVmap, n: int):
        self.inner, self.n = inner, n

    def fun(self, leaves):
        outs, t_outs = jvp_flat(lambda *p: self.inner.fun(p), leaves[:self.n], leaves[self.n:])
        return outs + [instantiate(t) for t in t_outs]

    def rule(self, size, batched, leaves):
        n = self.n
        either = [bp or bt for bp, bt in zip(batched[:n], batched[n:])]
        primals = _all_batched(size, [b or not e for b, e in zip(batched[:n], either)],
                               leaves[:n])
        tangents = _all_batched(size, [b or not e for b, e in zip(batched[n:], either)],
                                leaves[n:])
        box = []

        def of_primals(*p):
            outs, out_batched = self.inner.rule(size, either, p)
            box.append(out_batched)
            return outs
        outs, t_outs = jvp_flat(of_primals, primals, tangents)
        return outs + [instantiate(t) for t in t_outs], box[0] * 2


class _VJP(_FlatVmap):
    """``(primals, cotangents) -> input cotangents`` of ``inner``; its rule
    pulls the cotangents back through ``inner``'s rule, every primal
    batched (a cotangent of an output shared by the batch is summed)."""

    def __init__(self, inner: _FlatVmap, n: int):
        self.inner, self.n = inner, n

    def fun(self, leaves):
        _, pullback = vjp_flat(lambda *p: self.inner.fun(p), leaves[:self.n])
        return [instantiate(g) for g in pullback(leaves[self.n:])]

    def rule(self, size, batched, leaves):
        from numxla.primitives import reduce_sum
        primals = _all_batched(size, batched[:self.n], leaves[:self.n])
        box = []

        def of_primals(*p):
            outs, out_batched = self.inner.rule(size, [True] * self.n, p)
            box.append(out_batched)
            return outs
        _, pullback = vjp_flat(of_primals, primals)
        cts = []
        for ct, ct_batched, out_batched in zip(leaves[self.n:], batched[self.n:], box[0]):
            if out_batched and not ct_batched:
                ct = move_batch_dim(ct, None, 0, size)
            elif ct_batched and not out_batched:
                ct = reduce_sum(ct, axes=(0,))
            cts.append(ct)
        return [instantiate(g) for g in pullback(cts)], [True] * self.n


def _jvp_rule(primals: tuple, tangents: tuple, *, flat: _FlatVmap) -> tuple[tuple, tuple]:
    outs = _apply(_JVP(flat, len(primals)), list(primals) + [instantiate(t) for t in tangents])
    half = len(outs) // 2
    return tuple(outs[:half]), tuple(outs[half:])


def _vjp_rule(cts: tuple, fwd: Any, *primals: Any, flat: _FlatVmap) -> tuple:
    return tuple(_apply(_VJP(flat, len(primals)),
                        list(primals) + [instantiate(c) for c in cts]))


custom_vmap_call_p.def_impl(lambda *leaves, flat: tuple(flat.fun(leaves)))
custom_vmap_call_p.def_abstract_eval(_traced_avals)
batch_rules[custom_vmap_call_p] = _batch_rule
jvp_rules[custom_vmap_call_p] = _jvp_rule
vjp_forward_rules[custom_vmap_call_p] = lambda *primals, flat: (tuple(_apply(flat, primals)),
                                                                None)
vjp_rules[custom_vmap_call_p] = _vjp_rule


# --------------------------------------------------------------------------
# the user's functions
# --------------------------------------------------------------------------

def _bools_like(tree: Any, batched: Any, what: str) -> list[bool]:
    """``batched`` (a pytree of bools like ``tree``, or a prefix of it) as
    one bool per leaf of ``tree``."""
    leaves, structure = pytree.flatten(batched)
    if structure == pytree.tree_structure(tree):
        return [bool(b) for b in leaves]
    try:
        return [bool(b) for b in pytree.axes_for_leaves(batched, tree, "custom_vmap", what)]
    except (TypeError, ValueError) as error:
        raise ValueError(f"custom_vmap: the vmap rule's {what} must be a pytree of bools "
                         f"matching its output: {error}") from None


class _UserCall(_FlatVmap):
    """One call of a ``custom_vmap`` function: its arguments' structure."""

    def __init__(self, wrapper: "custom_vmap", in_tree: pytree.TreeDef):
        self.wrapper, self.in_tree = wrapper, in_tree
        self.out_tree: pytree.TreeDef | None = None

    def fun(self, leaves):
        out_leaves, self.out_tree = pytree.flatten(self.wrapper.fun(*self.in_tree.unflatten(
            leaves)))
        return out_leaves

    def rule(self, size, batched, leaves):
        in_batched = list(self.in_tree.unflatten(list(batched)))
        out, out_batched = self.wrapper.vmap_rule(size, in_batched,
                                                  *self.in_tree.unflatten(list(leaves)))
        out_leaves, self.out_tree = pytree.flatten(out)
        return out_leaves, _bools_like(out, out_batched, "out_batched")


class custom_vmap:  # noqa: N801 (JAX's name)
    """``f = custom_vmap(fun)``, then ``@f.def_vmap`` on
    ``rule(axis_size, in_batched, *args) -> (out, out_batched)``."""

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None

    def def_vmap(self, vmap_rule: Callable[..., Any]) -> Callable[..., Any]:
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            bound = inspect.signature(self.fun).bind(*args, **kwargs)
            args = bound.args + tuple(bound.kwargs.values())
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function "
                                 f"{getattr(self.fun, '__name__', self.fun)} using def_vmap.")
        leaves, in_tree = pytree.flatten(args)
        call = _UserCall(self, in_tree)
        outs = _apply(call, leaves)
        return call.out_tree.unflatten(outs)


def sequential_vmap(f: Callable[..., Any]) -> custom_vmap:
    """``f`` as a ``custom_vmap`` function whose ``vmap`` runs it on one
    example after another (``lax.map`` over the batched arguments, the
    unbatched ones shared), as JAX's ``sequential_vmap``."""
    wrapped = custom_vmap(f)

    @wrapped.def_vmap
    def rule(axis_size: int, in_batched: list, *args: Any) -> tuple[Any, Any]:
        from numxla.primitives.control_flow import map_sequential
        leaves, tree = pytree.flatten(args)
        batched = pytree.tree_leaves(in_batched)
        mapped = [x for x, b in zip(leaves, batched) if b]

        def one(xs: list) -> Any:
            it = iter(xs)
            return wrapped(*tree.unflatten([next(it) if b else x
                                            for x, b in zip(leaves, batched)]))
        out = map_sequential(one, mapped)
        return out, pytree.tree_map(lambda _: True, out)

    return wrapped
