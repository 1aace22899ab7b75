"""StableHLO shape and data-movement ops -> numxla."""
from __future__ import annotations

import primitives as lax

from .harness import OpCall, register


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
