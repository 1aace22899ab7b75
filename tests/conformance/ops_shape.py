"""StableHLO shape and data-movement ops -> numxla.

StableHLO's ``dynamic_*`` variants take their shapes as operands; in these
cases the operands are constants, so they map to the static ops with the
operand values.
"""
from __future__ import annotations

import numpy as np

import numxla.primitives as lax
from .harness import OpCall, register


def _ints(value) -> list[int]:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def _broadcast_in_dim(operand, shape, dims):
    """StableHLO allows broadcast_dimensions in any order; XLA's BroadcastInDim
    wants them increasing, so the operand is transposed first."""
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    operand = lax.transpose(operand, order)
    return lax.broadcast_in_dim(operand, shape, [dims[i] for i in order])


@register("broadcast_in_dim")
def _broadcast_in_dim_op(call: OpCall):
    return _broadcast_in_dim(call.operands[0], call.result_types[0].dimensions,
                             call.attributes["broadcast_dimensions"])


@register("dynamic_broadcast_in_dim")
def _dynamic_broadcast_in_dim(call: OpCall):
    return _broadcast_in_dim(call.operands[0], _ints(call.operands[1]),
                             call.attributes["broadcast_dimensions"])


@register("reshape")
def _reshape(call: OpCall):
    return lax.reshape(call.operands[0], call.result_types[0].dimensions)


@register("dynamic_reshape")
def _dynamic_reshape(call: OpCall):
    return lax.reshape(call.operands[0], _ints(call.operands[1]))


@register("transpose")
def _transpose(call: OpCall):
    return lax.transpose(call.operands[0], call.attributes["permutation"])


@register("reverse")
def _reverse(call: OpCall):
    return lax.rev(call.operands[0], call.attributes["dimensions"])


@register("slice")
def _slice(call: OpCall):
    a = call.attributes
    return lax.slice(call.operands[0], a["start_indices"], a["limit_indices"], a["strides"])


@register("dynamic_slice")
def _dynamic_slice(call: OpCall):
    return lax.dynamic_slice(call.operands[0], call.operands[1:],
                             call.attributes["slice_sizes"], allow_negative_indices=False)


@register("dynamic_update_slice")
def _dynamic_update_slice(call: OpCall):
    return lax.dynamic_update_slice(call.operands[0], call.operands[1], call.operands[2:],
                                    allow_negative_indices=False)


@register("pad")
def _pad(call: OpCall):
    a = call.attributes
    config = zip(a["edge_padding_low"], a["edge_padding_high"], a["interior_padding"])
    return lax.pad(call.operands[0], call.operands[1], list(config))


@register("dynamic_pad")
def _dynamic_pad(call: OpCall):
    operand, value, low, high, interior = call.operands
    return lax.pad(operand, value, list(zip(_ints(low), _ints(high), _ints(interior))))


@register("concatenate")
def _concatenate(call: OpCall):
    return lax.concatenate(call.operands, call.attributes["dimension"])


@register("iota")
def _iota(call: OpCall):
    t = call.result_types[0]
    return lax.broadcasted_iota(t.element_type, t.dimensions, call.attributes["iota_dimension"])


@register("dynamic_iota")
def _dynamic_iota(call: OpCall):
    t = call.result_types[0]
    return lax.broadcasted_iota(t.element_type, _ints(call.operands[0]),
                                call.attributes["iota_dimension"])


@register("get_dimension_size")
def _get_dimension_size(call: OpCall):
    return lax.get_dimension_size(call.operands[0], call.attributes["dimension"])
