"""StableHLO dot_general and convolution -> numxla."""
from __future__ import annotations

import primitives as lax

from .harness import OpCall, register


@register("dot_general")
def _dot_general(call: OpCall):
    dn = call.attributes["dot_dimension_numbers"]
    return lax.dot_general(
        *call.operands,
        ((dn["lhs_contracting_dimensions"], dn["rhs_contracting_dimensions"]),
         (dn["lhs_batching_dimensions"], dn["rhs_batching_dimensions"])),
        preferred_element_type=call.result_types[0].element_type)
