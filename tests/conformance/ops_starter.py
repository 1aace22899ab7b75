"""Mappings of the starter ops (elementwise arithmetic, compare, select,
convert, broadcast_in_dim, reshape, transpose, dot_general)."""
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


@register("broadcast_in_dim")
def _broadcast_in_dim(call: OpCall):
    return lax.broadcast_in_dim(call.operands[0], call.result_types[0].dimensions,
                                call.attributes["broadcast_dimensions"])


@register("reshape")
def _reshape(call: OpCall):
    return lax.reshape(call.operands[0], call.result_types[0].dimensions)


@register("transpose")
def _transpose(call: OpCall):
    return lax.transpose(call.operands[0], call.attributes["permutation"])


@register("dot_general")
def _dot_general(call: OpCall):
    dn = call.attributes["dot_dimension_numbers"]
    return lax.dot_general(
        *call.operands,
        ((dn["lhs_contracting_dimensions"], dn["rhs_contracting_dimensions"]),
         (dn["lhs_batching_dimensions"], dn["rhs_batching_dimensions"])),
        preferred_element_type=call.result_types[0].element_type)
