"""StableHLO fft, cholesky and triangular_solve -> numxla."""
from __future__ import annotations

import numxla.primitives as lax
from .harness import OpCall, register


@register("fft")
def _fft(call: OpCall):
    return lax.fft(call.operands[0], call.attributes["fft_type"], call.attributes["fft_length"])


@register("cholesky")
def _cholesky(call: OpCall):
    return lax.cholesky(call.operands[0], lower=call.attributes.get("lower", False))


@register("triangular_solve")
def _triangular_solve(call: OpCall):
    attrs = call.attributes
    return lax.triangular_solve(*call.operands, left_side=attrs["left_side"],
                                lower=attrs["lower"], unit_diagonal=attrs["unit_diagonal"],
                                transpose_a=attrs["transpose_a"])
