"""StableHLO reduce, reduce_window, select_and_scatter, sort and chlo.top_k -> numxla.

A region callable takes its arguments flat (``acc..., x...`` for reducers,
``lhs_0, rhs_0, ...`` for comparators); the wrappers here adapt it to the
user functions' pytree form."""
from __future__ import annotations

import numxla.primitives as lax
from .harness import OpCall, register


def _split(call: OpCall) -> tuple[list, list]:
    n = len(call.operands) // 2
    return call.operands[:n], call.operands[n:]


def _single(outs):
    """One result as an array (a program binds it to one name), several as a tuple."""
    return outs[0] if len(outs) == 1 else tuple(outs)


def _reducer(region):
    """A flat region as ``computation(acc, x)`` over tuples."""
    def computation(acc, x):
        out = region(*acc, *x)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)
    return computation


@register("reduce")
def _reduce(call: OpCall):
    operands, inits = _split(call)
    return _single(lax.reduce(tuple(operands), tuple(inits), _reducer(call.regions[0]),
                              call.attributes["dimensions"]))


def _window_attr(call: OpCall, name: str, rank: int):
    return tuple(call.attributes.get(name) or (1,) * rank)


@register("reduce_window")
def _reduce_window(call: OpCall):
    operands, inits = _split(call)
    rank = len(call.attributes["window_dimensions"])
    return _single(lax.reduce_window(
        tuple(operands), tuple(inits), _reducer(call.regions[0]),
        call.attributes["window_dimensions"], _window_attr(call, "window_strides", rank),
        [tuple(p) for p in call.attributes.get("padding") or [(0, 0)] * rank],
        _window_attr(call, "base_dilations", rank), _window_attr(call, "window_dilations", rank)))


@register("select_and_scatter")
def _select_and_scatter(call: OpCall):
    operand, source, init_value = call.operands
    rank = len(call.attributes["window_dimensions"])
    return lax.select_and_scatter(
        operand, call.regions[0], call.attributes["window_dimensions"],
        _window_attr(call, "window_strides", rank),
        [tuple(p) for p in call.attributes.get("padding") or [(0, 0)] * rank],
        source, init_value, call.regions[1])


@register("sort")
def _sort(call: OpCall):
    return _single(lax.sort(tuple(call.operands), dimension=call.attributes.get("dimension", -1),
                            is_stable=call.attributes.get("is_stable", False),
                            comparator=call.regions[0]))


@register("chlo.top_k")
def _top_k(call: OpCall):
    return lax.top_k(call.operands[0], call.attributes["k"])
