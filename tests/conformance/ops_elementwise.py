"""StableHLO element-wise ops, compare, select, convert -> numxla."""
from __future__ import annotations

import primitives as lax

from .harness import OpCall, register

_BINARY = {"add": lax.add, "subtract": lax.sub, "multiply": lax.mul, "divide": lax.div,
           "maximum": lax.max, "minimum": lax.min}
_UNARY = {"negate": lax.neg, "exponential": lax.exp, "log": lax.log, "tanh": lax.tanh}

for _name, _fn in _BINARY.items():
    register(_name)(lambda call, fn=_fn: fn(*call.operands))
for _name, _fn in _UNARY.items():
    register(_name)(lambda call, fn=_fn: fn(*call.operands))


@register("compare")
def _compare(call: OpCall):
    return lax.compare(*call.operands, call.attributes["comparison_direction"])


@register("select")
def _select(call: OpCall):
    return lax.select(*call.operands)


@register("convert")
def _convert(call: OpCall):
    return lax.convert_element_type(call.operands[0], call.result_types[0].element_type)
