"""StableHLO random-number ops -> numxla.

``rng_bit_generator`` is deterministic and mapped here.  ``stablehlo.rng``
(RngUniform/RngNormal) has implementation-defined values: its one case is
flagged ``nondeterministic`` and checked for shape and range by
tests/primitives/test_rng.py through :func:`rng_call` rather than by the
generic runner, which compares values exactly.
"""
from __future__ import annotations

import numpy as np

import numxla.primitives as lax
from .harness import OpCall, register


@register("rng_bit_generator")
def _rng_bit_generator(call: OpCall):
    out = call.result_types[1]
    return lax.rng_bit_generator(call.operands[0], out.dimensions, out.element_type,
                                 call.attributes.get("rng_algorithm", "DEFAULT"))


def rng_call(call: OpCall):
    """``stablehlo.rng``: UNIFORM or NORMAL over the result type's shape."""
    a, b, shape = call.operands
    fn = {"UNIFORM": lax.rng_uniform, "NORMAL": lax.rng_normal}[
        call.attributes["rng_distribution"]]
    return fn(a, b, tuple(int(d) for d in np.asarray(shape)))
