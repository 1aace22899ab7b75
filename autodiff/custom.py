"""User-defined derivatives and rematerialisation, JAX's ``custom_vjp``,
``custom_jvp`` and ``checkpoint``.

Each is a primitive that exists only while a differentiation interpreter is
the current one: a wrapped function called under ``grad``/``vjp`` (the
reverse interpreter) or ``jvp`` (the forward one) binds it, and the
interpreter applies the user's rule instead of differentiating the
function's ops.  Called anywhere else (eagerly, under ``jit`` tracing, a
``vmap`` outside any differentiation), the function simply runs, so graphs
hold its ops.  So ``jit(grad(f))`` uses the rule (the differentiation
happens while tracing) and ``grad(jit(f))`` differentiates the compiled
function's ops instead.  Under ``grad(vmap(f))`` the call is bound too, and
its batching rule binds a wrapped function of the same kind whose function
and rules are the originals vmapped, so the rule survives the ``vmap``.

* ``custom_vjp``: forward pass ``fwd(*args) -> (out, residuals)``, backward
  ``bwd(residuals, cotangent) -> one cotangent per argument``; under ``jvp``
  the function's own ops are differentiated.
* ``custom_jvp``: ``jvp(primals, tangents) -> (out, tangent_out)``; under
  reverse mode its cotangent map is the transpose of that tangent map, which
  is linear in the tangents: the VJP of ``t -> jvp(primals, t)[1]``.
* ``checkpoint``: the forward pass keeps only the inputs; the backward pass
  runs the function again, under ``vjp``, and pulls the cotangents through
  it (under ``jit(grad(...))`` the recomputed ops appear in the graph).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from numxla.tracer import pytree
from numxla.tracer.core import Primitive, abstractify, current_interpreter

from .batching import BatchInterpreter, vmap_flat
from .forward import JVPInterpreter, jvp_flat
from .reverse import ReverseInterpreter, vjp_flat
from .rules import Forward, Zero, batch_rules, instantiate, jvp_rules, move_batch_dim, \
    vjp_forward_rules, vjp_rules, zeros_like_aval

__all__ = ["custom_vjp", "custom_jvp", "checkpoint", "remat"]


def _is_tracked(interpreter: Any, leaves: Sequence[Any]) -> bool:
    return any(interpreter.lift(x)[1] is not None for x in leaves)


def _differentiates(interpreter: Any, kinds: tuple[type, ...], leaves: Sequence[Any]) -> bool:
    """Whether an interpreter of ``kinds`` differentiates one of ``leaves``:
    the current interpreter, or the first below the ``vmap``s it is under."""
    while isinstance(interpreter, BatchInterpreter):
        leaves = [interpreter.lift(x)[0] for x in leaves]
        interpreter = interpreter.parent
    return isinstance(interpreter, kinds) and _is_tracked(interpreter, leaves)


def _split(args: tuple, nondiff_argnums: tuple[int, ...]) -> tuple[tuple, tuple]:
    fixed = tuple(args[i] for i in nondiff_argnums)
    rest = tuple(a for i, a in enumerate(args) if i not in nondiff_argnums)
    return fixed, rest


def _merge(fixed: tuple, rest: tuple, nondiff_argnums: tuple[int, ...]) -> tuple:
    out, fixed_it, rest_it = [], iter(fixed), iter(rest)
    for i in range(len(fixed) + len(rest)):
        out.append(next(fixed_it) if i in nondiff_argnums else next(rest_it))
    return tuple(out)


class _Call:
    """What one call of a wrapped function binds: its flat differentiable
    arguments' structure, and a box the forward rule fills with the output
    structure (known once the function has run)."""

    def __init__(self, wrapper: Any, fixed: tuple, in_tree: pytree.TreeDef):
        self.wrapper, self.fixed, self.in_tree = wrapper, fixed, in_tree
        self.out_tree: pytree.TreeDef | None = None

    def args(self, leaves: Sequence[Any]) -> tuple:
        return _merge(self.fixed, tuple(self.in_tree.unflatten(leaves)),
                      self.wrapper.nondiff_argnums)

    def run(self, leaves: Sequence[Any]) -> list[Any]:
        out_leaves, self.out_tree = pytree.flatten(self.wrapper.fun(*self.args(leaves)))
        return out_leaves


def _bind(primitive: Primitive, wrapper: Any, args: tuple) -> Any:
    fixed, rest = _split(args, wrapper.nondiff_argnums)
    leaves, in_tree = pytree.flatten(rest)
    call = _Call(wrapper, fixed, in_tree)
    outs = primitive.bind(*leaves, call=call)
    return call.out_tree.unflatten(outs)


custom_vjp_call_p = Primitive("custom_vjp_call", multiple_results=True)
custom_jvp_call_p = Primitive("custom_jvp_call", multiple_results=True)
remat_call_p = Primitive("remat_call", multiple_results=True)


def _run(*leaves: Any, call: "_Call") -> tuple:
    return tuple(call.run(leaves))


def _traced_avals(*avals: Any, call: "_Call") -> tuple:
    from numxla.tracer.tracing import trace_pytree
    graph, _ = trace_pytree(lambda *leaves: call.run(leaves), avals)
    return graph.out_avals


# Bound only under a differentiation interpreter, whose rules take over;
# evaluated or traced plainly, each is its function.
def _function_jvp(primals: tuple, tangents: tuple, *, call: "_Call") -> tuple[tuple, tuple]:
    """Forward mode through the function's own ops (JAX refuses ``jvp`` of a
    ``custom_vjp`` function; numxla differentiates ``fun`` instead)."""
    outs, t_outs = jvp_flat(lambda *leaves: call.run(leaves), primals, tangents)
    return tuple(outs), tuple(t_outs)


class _Batched:
    """One call's function and rules mapped over a batch: its ``leaves`` are
    batched at ``dims`` (``None``: shared by every example), results and
    residuals at 0.  ``self(fn, *xs)`` maps a function of per-example leaves."""

    def __init__(self, call: "_Call", leaves: Sequence[Any], dims: Sequence[int | None],
                 size: int):
        self.call, self.leaves, self.dims, self.size = call, tuple(leaves), tuple(dims), size

    def __call__(self, fn: Callable[..., Sequence[Any]], *leaves: Any,
                 dims: Sequence[int | None] | None = None) -> list[Any]:
        return vmap_flat(fn, leaves, self.dims if dims is None else dims, 0, self.size)

    def fun(self, *leaves: Any) -> list[Any]:
        return self(lambda *xs: self.call.run(xs), *leaves)

    def vjp_fwd(self, *leaves: Any) -> tuple[list[Any], tuple]:
        n_out, res_tree = [], []

        def one(*xs):
            out, residuals = self.call.wrapper.fwd(*self.call.args(xs))
            out_leaves, self.call.out_tree = pytree.flatten(out)
            res_leaves, tree = pytree.flatten(residuals)
            n_out.append(len(out_leaves))
            res_tree.append(tree)
            return out_leaves + res_leaves
        flat = self(one, *leaves)
        return flat[:n_out[0]], (res_tree[0], flat[n_out[0]:])

    def vjp_bwd(self, residuals: tuple, cts: Sequence[Any]) -> tuple:
        res_tree, res_leaves = residuals
        n_res, n_ct = len(res_leaves), len(cts)

        def one(*xs):
            res = res_tree.unflatten(list(xs[:n_res]))
            ct = self.call.out_tree.unflatten(list(xs[n_res:n_res + n_ct]))
            grads = self.call.wrapper.bwd(*self.call.fixed, res, ct)
            return _cotangent_leaves(grads, self.call.in_tree.unflatten(xs[n_res + n_ct:]))
        grads = self(one, *res_leaves, *cts, *self.leaves,
                     dims=[0] * (n_res + n_ct) + list(self.dims))
        return tuple(self._unbatch(g, d) for g, d in zip(grads, self.dims))

    def jvp(self, primals: tuple, tangents: tuple) -> tuple[list[Any], list[Any]]:
        n = len(primals)

        def one(*xs):
            out, t_out = _user_jvp(self.call, xs[:n], xs[n:])
            return out + t_out
        flat = self(one, *primals, *tangents, dims=self.dims * 2)
        return flat[:len(flat) // 2], flat[len(flat) // 2:]

    def _unbatch(self, ct: Any, dim: int | None) -> Any:
        """A per-example cotangent (batched at 0) for a leaf batched at ``dim``:
        summed over the batch where the leaf was shared."""
        from numxla.primitives import reduce_sum
        if dim is None:
            return reduce_sum(ct, axes=(0,))
        return move_batch_dim(ct, 0, dim, self.size)


def _batched_wrapper(call: "_Call", leaves: Sequence[Any], dims: Sequence[int | None],
                     size: int) -> "_Wrapped":
    """A wrapped function of ``call``'s kind over its flat leaves, whose
    function and rule are the call's, vmapped."""
    batched = _Batched(call, leaves, dims, size)
    kind = type(call.wrapper)
    if kind is custom_vjp:
        wrapper = custom_vjp(batched.fun)
        wrapper.defvjp(batched.vjp_fwd, batched.vjp_bwd)
    elif kind is custom_jvp:
        wrapper = custom_jvp(batched.fun)
        wrapper.defjvp(batched.jvp)
    else:
        wrapper = kind(batched.fun)
    return wrapper


def _rule_batch(args: tuple, dims: tuple, *, call: "_Call") -> tuple[tuple, tuple]:
    """``vmap`` of a bound call (one under ``grad``/``jvp``): the same kind of
    call on the batch, its function and rule mapped, so the rule still
    applies.  Results are batched at 0."""
    size = next(abstractify(a).dimensions[d] for a, d in zip(args, dims) if d is not None)
    wrapper = _batched_wrapper(call, args, dims, size)
    outs = _bind(type(call.wrapper).primitive, wrapper, tuple(args))
    return tuple(outs), (0,) * len(outs)


for _p in (custom_vjp_call_p, custom_jvp_call_p, remat_call_p):
    _p.def_impl(_run)
    _p.def_abstract_eval(_traced_avals)
    batch_rules[_p] = _rule_batch
for _p in (custom_vjp_call_p, remat_call_p):
    jvp_rules[_p] = _function_jvp


class _Wrapped:
    """A function with a rule of its own: bound as ``primitive`` when one of
    ``interpreters`` is current and differentiates an argument, run as it
    is otherwise."""
    primitive: Primitive
    interpreters: tuple[type, ...] = (ReverseInterpreter,)

    def __init__(self, fun: Callable[..., Any], nondiff_argnums: Sequence[int] = ()):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = tuple(nondiff_argnums)

    def _check_defined(self) -> None:
        """Raise if the rule is still missing."""

    def __call__(self, *args: Any) -> Any:
        self._check_defined()
        interpreter = current_interpreter()
        _, rest = _split(args, self.nondiff_argnums)
        if _differentiates(interpreter, self.interpreters, pytree.tree_leaves(rest)):
            return _bind(self.primitive, self, args)
        return self.fun(*args)


def _cotangent_leaves(grads: Sequence[Any], args: Sequence[Any]) -> list[Any]:
    """Per-argument cotangents (``None``: zero) as leaves, one per leaf of ``args``."""
    out = []
    for g, arg in zip(grads, args):
        leaves = pytree.tree_leaves(arg)
        out.extend([zeros_like_aval(abstractify(x)) for x in leaves] if g is None
                   else pytree.tree_leaves(g))
    return out


# --------------------------------------------------------------------------
# custom_vjp
# --------------------------------------------------------------------------

class custom_vjp(_Wrapped):  # noqa: N801 (JAX's name)
    """``f = custom_vjp(fun)``, then ``f.defvjp(fwd, bwd)``."""
    primitive = custom_vjp_call_p
    fwd: Callable[..., Any] | None = None
    bwd: Callable[..., Any] | None = None

    def defvjp(self, fwd: Callable[..., Any], bwd: Callable[..., Any]) -> None:
        self.fwd, self.bwd = fwd, bwd

    def _check_defined(self) -> None:
        if self.fwd is None:
            raise TypeError(f"custom_vjp {getattr(self.fun, '__name__', self.fun)!r}: call "
                            f"defvjp(fwd, bwd) before calling it")


def _custom_vjp_forward(*primals: Any, call: _Call) -> tuple[tuple, Any]:
    out, residuals = call.wrapper.fwd(*call.args(primals))
    out_leaves, call.out_tree = pytree.flatten(out)
    return tuple(out_leaves), residuals


def _custom_vjp_backward(cts: tuple, fwd: Forward, *primals: Any, call: _Call) -> tuple:
    ct = call.out_tree.unflatten([instantiate(c) for c in cts])
    grads = call.wrapper.bwd(*call.fixed, fwd.residuals, ct)
    rest = call.in_tree.unflatten(primals)
    if not isinstance(grads, (tuple, list)) or len(grads) != len(rest):
        raise TypeError(f"custom_vjp bwd must return a tuple of {len(rest)} cotangents (one "
                        f"per differentiable argument), got {type(grads).__name__}")
    return tuple(_cotangent_leaves(grads, rest))


vjp_forward_rules[custom_vjp_call_p] = _custom_vjp_forward
vjp_rules[custom_vjp_call_p] = _custom_vjp_backward


# --------------------------------------------------------------------------
# custom_jvp
# --------------------------------------------------------------------------

class custom_jvp(_Wrapped):  # noqa: N801 (JAX's name)
    """``f = custom_jvp(fun)``, then ``@f.defjvp`` on ``jvp(primals, tangents)``."""
    primitive = custom_jvp_call_p
    interpreters = (JVPInterpreter, ReverseInterpreter)
    jvp: Callable[..., Any] | None = None

    def defjvp(self, jvp: Callable[..., Any]) -> Callable[..., Any]:
        self.jvp = jvp
        return jvp

    def defjvps(self, *rules: Callable[..., Any] | None) -> None:
        """One rule per argument, ``rule(tangent, out, *primals)``; summed."""
        def jvp(primals, tangents):
            out = self.fun(*primals)
            terms = [rule(t, out, *primals) for rule, t in zip(rules, tangents)
                     if rule is not None]
            total = terms[0]
            for term in terms[1:]:
                total = pytree.tree_map(lambda a, b: a + b, total, term)
            return out, total
        self.jvp = jvp

    def _check_defined(self) -> None:
        if self.jvp is None:
            raise TypeError(f"custom_jvp {getattr(self.fun, '__name__', self.fun)!r}: define "
                            f"its rule with defjvp before calling it")


def _user_jvp(call: _Call, primals: Sequence[Any], tangents: Sequence[Any]
              ) -> tuple[list[Any], list[Any]]:
    rest_p = call.in_tree.unflatten(primals)
    rest_t = call.in_tree.unflatten(tangents)
    out, t_out = call.wrapper.jvp(*call.fixed, tuple(rest_p), tuple(rest_t))
    out_leaves, call.out_tree = pytree.flatten(out)
    return out_leaves, pytree.tree_leaves(t_out)


def _custom_jvp_rule(primals: tuple, tangents: tuple, *, call: _Call) -> tuple[tuple, tuple]:
    out, t_out = _user_jvp(call, primals, [instantiate(t) if isinstance(t, Zero) else t
                                           for t in tangents])
    return tuple(out), tuple(t_out)


def _custom_jvp_forward(*primals: Any, call: _Call) -> tuple[tuple, Any]:
    return tuple(call.run(primals)), None


def _custom_jvp_backward(cts: tuple, fwd: Forward, *primals: Any, call: _Call) -> tuple:
    """The transpose of the (linear) tangent map at ``primals``."""
    def tangent_map(*tangents):
        return _user_jvp(call, primals, tangents)[1]

    zeros = [zeros_like_aval(abstractify(p)) for p in primals]
    _, pullback = vjp_flat(tangent_map, zeros)
    return tuple(pullback([c for c in cts]))


jvp_rules[custom_jvp_call_p] = _custom_jvp_rule
vjp_forward_rules[custom_jvp_call_p] = _custom_jvp_forward
vjp_rules[custom_jvp_call_p] = _custom_jvp_backward


# --------------------------------------------------------------------------
# checkpoint / remat
# --------------------------------------------------------------------------

class _Remat(_Wrapped):
    primitive = remat_call_p


def checkpoint(fun: Callable[..., Any], *, prevent_cse: bool = True, policy: Any = None,
               static_argnums: int | Sequence[int] = ()) -> Callable[..., Any]:
    """JAX's ``checkpoint``: ``fun``'s intermediates are not kept for the
    backward pass but recomputed there (``policy``, which would name values
    to keep, is accepted and ignored: nothing is kept)."""
    del prevent_cse, policy  # no CSE pass merges the recomputation; nothing is saved
    statics = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    return _Remat(fun, statics)


remat = checkpoint


def _remat_backward(cts: tuple, fwd: Forward, *primals: Any, call: _Call) -> tuple:
    _, pullback = vjp_flat(lambda *leaves: call.run(leaves), primals)
    return tuple(pullback(list(cts)))


vjp_forward_rules[remat_call_p] = lambda *primals, call: (tuple(call.run(primals)), None)
vjp_rules[remat_call_p] = _remat_backward
