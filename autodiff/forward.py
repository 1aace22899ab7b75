"""Forward mode: ``jvp`` (``jacfwd`` is in ``jacobians.py``).

A :class:`JVPInterpreter` carries a (primal, tangent) pair for each value
that depends on the differentiated inputs; every ``bind`` on such a value
runs the primitive's JVP rule (``rules.jvp_rules``) on the parent
interpreter, so the rule's ops are evaluated, traced into a graph, or
transformed again by an enclosing transform (``jvp`` of ``jvp``).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import Interpreter, Primitive, Tracer, abstractify, current_interpreter, \
    set_interpreter

from .rules import Zero, is_differentiable_type, is_zero, jvp_rules, non_differentiable, user_zero

__all__ = ["jvp", "jvp_flat", "JVPInterpreter", "JVPTracer", "ConcreteTracerMixin"]


class ConcreteTracerMixin:
    """Python control flow on a transformed value whose primal is concrete
    (an eager ``grad``), as in JAX: ``bool``/``int``/``float`` ask the primal."""

    primal: Any

    def __bool__(self):
        return bool(self.primal)

    def __int__(self):
        return int(self.primal)

    def __float__(self):
        return float(self.primal)

    def __index__(self):
        return int(self.primal) if not isinstance(self.primal, Tracer) else self.primal.__index__()

    def __array__(self, dtype=None, copy=None):
        if isinstance(self.primal, Tracer):
            return self.primal.__array__(dtype)
        return np.asarray(self.primal, dtype)

    def describe_origin(self) -> str:
        primal = self.primal
        return primal.describe_origin() if isinstance(primal, Tracer) else "a differentiated value"


class JVPTracer(ConcreteTracerMixin, Tracer):
    __slots__ = ("_interpreter", "primal", "tangent", "_aval")

    def __init__(self, interpreter: "JVPInterpreter", primal: Any, tangent: Any):
        self._interpreter = interpreter
        self.primal = primal
        self.tangent = tangent
        self._aval = abstractify(primal)

    @property
    def aval(self):  # type: ignore[override]
        return self._aval

    def __repr__(self) -> str:
        return f"JVPTracer<{self._aval}>"


class JVPInterpreter(Interpreter):
    def __init__(self, parent: Interpreter | None = None):
        self.parent = parent if parent is not None else current_interpreter()
        self.active = True

    def lift(self, x: Any) -> tuple[Any, Any]:
        if isinstance(x, JVPTracer) and x._interpreter is self:
            return x.primal, x.tangent
        return x, Zero(abstractify(x))

    def interpret(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        pairs = [self.lift(a) for a in args]
        primals = tuple(p for p, _ in pairs)
        tangents = tuple(t for _, t in pairs)
        with set_interpreter(self.parent):
            if primitive in non_differentiable or all(is_zero(t) for t in tangents):
                return primitive.bind(*primals, **params)
            rule = jvp_rules.get(primitive)
            if rule is None:
                raise NotImplementedError(f"{primitive.name}: no JVP rule (forward-mode "
                                          f"differentiation of {primitive.name} is not defined)")
            out, t_out = rule(primals, tangents, **params)
        if primitive.multiple_results:
            return tuple(self.wrap(o, t) for o, t in zip(out, t_out))
        return self.wrap(out, t_out)

    def wrap(self, primal: Any, tangent: Any) -> Any:
        if is_zero(tangent) or not is_differentiable_type(abstractify(primal)):
            return primal
        _check_tangent(primal, tangent)
        return JVPTracer(self, primal, tangent)


def _check_tangent(primal: Any, tangent: Any) -> None:
    p, t = abstractify(primal), abstractify(tangent)
    if p.dimensions != t.dimensions or p.element_type is not t.element_type:
        raise AssertionError(f"a JVP rule gave a tangent {t.shape} for a primal {p.shape}")


def jvp_flat(fn: Callable[..., Sequence[Any]], primals: Sequence[Any], tangents: Sequence[Any]
             ) -> tuple[list[Any], list[Any]]:
    """``fn`` on flat values, with tangents (``Zero`` allowed); returns the
    flat outputs and their tangents (``Zero`` where nothing flowed)."""
    interp = JVPInterpreter()
    args = [JVPTracer(interp, p, t) if not is_zero(t) else p for p, t in zip(primals, tangents)]
    try:
        with set_interpreter(interp):
            outs = list(fn(*args))
    finally:
        interp.active = False
    pairs = [interp.lift(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


def _tangent_in(primal: Any, tangent: Any) -> Any:
    aval = abstractify(primal)
    if not is_differentiable_type(aval):
        return Zero(aval)            # an int/bool input: its tangent is float0
    t_aval = abstractify(tangent)
    if t_aval.dimensions != aval.dimensions:
        raise TypeError(f"jvp: a tangent of shape {t_aval.dimensions} for a primal of shape "
                        f"{aval.dimensions}")
    if t_aval.element_type is not aval.element_type:
        raise TypeError(f"jvp: a tangent of type {t_aval.element_type.short_name} for a primal "
                        f"of type {aval.element_type.short_name}; they must be equal")
    return tangent


def jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """JAX's ``jvp``: ``(fn(*primals), d fn(primals)[tangents])`` over pytrees;
    with ``has_aux``, ``fn`` returns ``(out, aux)`` and ``aux`` (not
    differentiated) comes third."""
    primals, tangents = tuple(primals), tuple(tangents)
    p_leaves, p_tree = pytree.flatten(primals)
    t_leaves, t_tree = pytree.flatten(tangents)
    if p_tree != t_tree:
        raise TypeError(f"jvp: primals and tangents must have the same structure, got "
                        f"{p_tree} and {t_tree}")
    t_leaves = [_tangent_in(p, t) for p, t in zip(p_leaves, t_leaves)]
    out_tree_box: list[Any] = []
    aux_box: list[Any] = []

    def flat_fn(*leaves):
        out = fn(*p_tree.unflatten(leaves))
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("jvp(has_aux=True): the function must return a pair (out, aux)")
            out, aux = out
            interp = current_interpreter()   # the JVPInterpreter: aux keeps its primal only
            aux_box.append(pytree.tree_map(
                lambda a: a.primal if isinstance(a, JVPTracer) and a._interpreter is interp
                else a, aux))
        out_leaves, out_tree = pytree.flatten(out)
        out_tree_box.append(out_tree)
        return out_leaves

    outs, t_outs = jvp_flat(flat_fn, p_leaves, t_leaves)
    out_tree = out_tree_box[0]
    t_outs = [user_zero(o, t) for o, t in zip(outs, t_outs)]
    if has_aux:
        return out_tree.unflatten(outs), out_tree.unflatten(t_outs), aux_box[0]
    return out_tree.unflatten(outs), out_tree.unflatten(t_outs)
