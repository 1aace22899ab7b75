"""Reverse mode: ``vjp``, ``grad``, ``value_and_grad`` (``jacrev`` is in ``jacobians.py``).

A :class:`ReverseInterpreter` runs the function forward on its parent
interpreter and records a tape: for every op that touches a differentiated
value, the primitive, its parameters, its operands and its results.  The
VJP function walks the tape backwards, calling each primitive's VJP rule
(``rules.vjp_rules``) on the interpreter current at that time, so the
backward pass is evaluated eagerly, traced into the same graph as the
forward pass (``jit(grad(f))``), or differentiated again (``grad(grad(f))``).
Forward values are concrete in an eager ``grad``: Python control flow on
them works, as in JAX.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import Interpreter, Primitive, Tracer, abstractify, current_interpreter, \
    set_interpreter

from .forward import ConcreteTracerMixin
from .rules import Forward, Zero, add_tangents, float0, is_differentiable_type, is_zero, \
    non_differentiable, scalar_like, user_zero, vjp_forward_rules, vjp_rules

__all__ = ["vjp", "vjp_flat", "grad", "value_and_grad", "ReverseInterpreter"]


class ReverseTracer(ConcreteTracerMixin, Tracer):
    __slots__ = ("_interpreter", "primal", "id", "_aval")

    def __init__(self, interpreter: "ReverseInterpreter", primal: Any, node_id: int):
        self._interpreter = interpreter
        self.primal = primal
        self.id = node_id
        self._aval = abstractify(primal)

    @property
    def aval(self):  # type: ignore[override]
        return self._aval

    def __repr__(self) -> str:
        return f"ReverseTracer<{self._aval}>"


class _TapeEntry:
    __slots__ = ("primitive", "params", "in_ids", "primals", "out_ids", "forward")

    def __init__(self, primitive, params, in_ids, primals, out_ids, forward):
        self.primitive = primitive
        self.params = params
        self.in_ids = in_ids
        self.primals = primals
        self.out_ids = out_ids
        self.forward = forward


class ReverseInterpreter(Interpreter):
    """Runs ops on the parent interpreter and records the tape."""

    def __init__(self, parent: Interpreter | None = None):
        self.parent = parent if parent is not None else current_interpreter()
        self.active = True
        self.tape: list[_TapeEntry] = []
        self._ids = itertools.count()

    def new_input(self, value: Any) -> ReverseTracer:
        return ReverseTracer(self, value, next(self._ids))

    def lift(self, x: Any) -> tuple[Any, int | None]:
        if isinstance(x, ReverseTracer) and x._interpreter is self:
            return x.primal, x.id
        return x, None

    def interpret(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        pairs = [self.lift(a) for a in args]
        primals = tuple(p for p, _ in pairs)
        in_ids = tuple(i for _, i in pairs)
        tracked = any(i is not None for i in in_ids) and primitive not in non_differentiable
        with set_interpreter(self.parent):
            if not tracked:
                return primitive.bind(*primals, **params)
            forward_rule = vjp_forward_rules.get(primitive)
            if forward_rule is not None:
                out, residuals = forward_rule(*primals, **params)
            else:
                out, residuals = primitive.bind(*primals, **params), None
        outs = tuple(out) if primitive.multiple_results else (out,)
        out_ids = tuple(next(self._ids) if is_differentiable_type(abstractify(o)) else None
                        for o in outs)
        wants = tuple(i is not None for i in in_ids)
        self.tape.append(_TapeEntry(primitive, params, in_ids, primals, out_ids,
                                    Forward(out, wants, residuals)))
        wrapped = tuple(o if i is None else ReverseTracer(self, o, i)
                        for o, i in zip(outs, out_ids))
        return wrapped if primitive.multiple_results else wrapped[0]

    def backward(self, out_cts: dict[int, Any]) -> dict[int, Any]:
        """Walk the tape backwards from the cotangents of some values (by id);
        returns the cotangent of every value reached (inputs included)."""
        cts = dict(out_cts)
        for entry in reversed(self.tape):
            outs = entry.forward.out if entry.primitive.multiple_results else (entry.forward.out,)
            ct_out = [cts.pop(i, None) if i is not None else None for i in entry.out_ids]
            if all(is_zero(c) for c in ct_out):
                continue
            rule = vjp_rules.get(entry.primitive)
            if rule is None:
                raise NotImplementedError(
                    f"{entry.primitive.name}: no VJP rule (reverse-mode differentiation of "
                    f"{entry.primitive.name} is not defined)")
            if entry.primitive.multiple_results:
                ct_arg = tuple(Zero(abstractify(o)) if is_zero(c) else c
                               for o, c in zip(outs, ct_out))
            else:
                ct_arg = ct_out[0]
            ct_in = rule(ct_arg, entry.forward, *entry.primals, **entry.params)
            if len(ct_in) != len(entry.in_ids):
                raise AssertionError(f"{entry.primitive.name}: the VJP rule gave {len(ct_in)} "
                                     f"cotangents for {len(entry.in_ids)} operands")
            for i, primal, c in zip(entry.in_ids, entry.primals, ct_in):
                if i is None or is_zero(c):
                    continue
                _check_cotangent(entry.primitive, primal, c)
                cts[i] = add_tangents(cts.get(i), c)
        return cts


def _check_cotangent(primitive: Primitive, primal: Any, ct: Any) -> None:
    p, c = abstractify(primal), abstractify(ct)
    if p.dimensions != c.dimensions or p.element_type is not c.element_type:
        raise AssertionError(f"{primitive.name}: the VJP rule gave a cotangent {c.shape} "
                             f"for an operand {p.shape}")


def vjp_flat(fn: Callable[..., Sequence[Any]], primals: Sequence[Any]
             ) -> tuple[list[Any], Callable[[Sequence[Any]], list[Any]]]:
    """``fn`` on flat values; returns its flat outputs and a function from
    output cotangents (``None``/``Zero`` allowed) to input cotangents
    (``Zero`` where nothing flowed, e.g. integer inputs)."""
    interp = ReverseInterpreter()
    tracers = [interp.new_input(p) if is_differentiable_type(abstractify(p)) else p
               for p in primals]
    try:
        with set_interpreter(interp):
            outs = list(fn(*tracers))
    finally:
        interp.active = False
    lifted = [interp.lift(o) for o in outs]
    out_values = [v for v, _ in lifted]
    in_ids = [t.id if isinstance(t, ReverseTracer) else None for t in tracers]

    def pullback(cts: Sequence[Any]) -> list[Any]:
        if len(cts) != len(lifted):
            raise TypeError(f"vjp: {len(cts)} cotangents for {len(lifted)} outputs")
        seeds: dict[int, Any] = {}
        for (_, i), c in zip(lifted, cts):
            if i is None or is_zero(c):
                continue
            seeds[i] = add_tangents(seeds.get(i), c)
        got = interp.backward(seeds)
        return [Zero(abstractify(p)) if i is None or is_zero(got.get(i)) else got[i]
                for p, i in zip(primals, in_ids)]

    return out_values, pullback


def vjp(fn: Callable[..., Any], *primals: Any, has_aux: bool = False):
    """JAX's ``vjp``: ``(fn(*primals), vjp_fn)`` (and ``aux`` with
    ``has_aux``); ``vjp_fn(ct)`` gives a tuple of cotangents, one per primal."""
    p_leaves, p_tree = pytree.flatten(primals)
    box: dict[str, Any] = {}

    def flat_fn(*leaves):
        out = fn(*p_tree.unflatten(leaves))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("vjp(has_aux=True): the function must return a pair (out, aux)")
            out, aux = out
            interp = current_interpreter()   # the ReverseInterpreter: aux is not differentiated
            aux_leaves, aux_tree = pytree.flatten(aux)
            box["aux"] = aux_tree.unflatten([interp.lift(a)[0] for a in aux_leaves])
        out_leaves, box["tree"] = pytree.flatten(out)
        return out_leaves

    outs, pullback = vjp_flat(flat_fn, p_leaves)
    out_tree = box["tree"]

    def vjp_fn(ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = pytree.flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"vjp: the cotangent has structure {ct_tree}, the output {out_tree}")
        for o, c in zip(outs, ct_leaves):
            oa = abstractify(o)
            if isinstance(c, np.ndarray) and c.dtype == float0:
                c_dims = c.shape             # an integer output's cotangent: no data
            else:
                c_dims = abstractify(c).dimensions
            if oa.dimensions != c_dims:
                raise TypeError(f"vjp: a cotangent of shape {c_dims} for an output of "
                                f"shape {oa.dimensions}")
        cts = pullback(ct_leaves)
        return tuple(p_tree.unflatten([user_zero(p, c) for p, c in zip(p_leaves, cts)]))

    result = out_tree.unflatten(outs)
    if has_aux:
        return result, vjp_fn, box["aux"]
    return result, vjp_fn


def _check_inexact_inputs(args: Sequence[Any], chosen: Sequence[int]) -> None:
    """JAX's rule: the differentiated arguments are floats or complex numbers."""
    for a in chosen:
        for leaf in pytree.tree_leaves(args[a]):
            t = abstractify(leaf).element_type
            if not (t.is_floating or t.is_complex):
                raise TypeError(f"grad requires real- or complex-valued inputs, but argument "
                                f"{a} has a {t.name} value ({abstractify(leaf).shape}); "
                                f"use vjp, or allow_int=True, for integer and boolean inputs")


def value_and_grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0,
                   has_aux: bool = False, holomorphic: bool = False,
                   allow_int: bool = False) -> Callable[..., Any]:
    """JAX's ``value_and_grad``: ``(fn(*args), d fn / d args[argnums])``;
    ``fn`` must return a real scalar (plus ``aux`` with ``has_aux``), or with
    ``holomorphic`` a complex scalar of complex arguments, whose derivative
    ``f'(z)`` is returned (the VJP of the cotangent 1, as JAX's)."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def wrapped(*args: Any, **kwargs: Any):
        for a in nums:
            if not -len(args) <= a < len(args):
                raise ValueError(f"grad: argnums {a} is out of range for {len(args)} "
                                 f"positional arguments")
        chosen = [a % len(args) for a in nums]
        if not allow_int:
            _check_inexact_inputs(args, chosen)

        def of_chosen(*diff_args):
            full = list(args)
            for a, v in zip(chosen, diff_args):
                full[a] = v
            return fn(*full, **kwargs)

        out = vjp(of_chosen, *(args[a] for a in chosen), has_aux=has_aux)
        value, vjp_fn = out[0], out[1]
        aval = abstractify(value)
        if holomorphic:
            for a in chosen:
                if not all(abstractify(x).element_type.is_complex
                           for x in pytree.tree_leaves(args[a])):
                    raise TypeError(f"grad(holomorphic=True) requires complex arguments; "
                                    f"argument {a} is {abstractify(args[a]).shape}")
            if aval.ndim != 0 or not aval.element_type.is_complex:
                raise TypeError(f"grad(holomorphic=True) requires a complex scalar output, "
                                f"got {aval.shape}")
        elif aval.ndim != 0 or not aval.element_type.is_floating:
            raise TypeError(f"grad requires a real scalar output, got {aval.shape}"
                            + (" (holomorphic=True differentiates complex functions)"
                               if aval.element_type.is_complex else ""))
        grads = vjp_fn(scalar_like(aval, 1))
        g = grads[0] if single else tuple(grads)
        return ((value, out[2]), g) if has_aux else (value, g)

    wrapped.__name__ = f"value_and_grad_{getattr(fn, '__name__', 'fn')}"
    wrapped.__wrapped__ = fn
    return wrapped


def grad(fn: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False, holomorphic: bool = False,
         allow_int: bool = False) -> Callable[..., Any]:
    """JAX's ``grad``: the gradient of a real scalar function with respect to
    ``args[argnums]`` (a tuple of gradients for a tuple of argnums)."""
    vg = value_and_grad(fn, argnums, has_aux, holomorphic, allow_int)

    def wrapped(*args: Any, **kwargs: Any):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    wrapped.__name__ = f"grad_{getattr(fn, '__name__', 'fn')}"
    wrapped.__wrapped__ = fn
    return wrapped
