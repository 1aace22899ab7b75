"""StableHLO batch_norm_training, batch_norm_inference and batch_norm_grad -> numxla."""
from __future__ import annotations

import numxla.primitives as lax
from .harness import OpCall, register


def _params(call: OpCall) -> dict:
    return {"epsilon": call.attributes["epsilon"],
            "feature_index": call.attributes["feature_index"]}


@register("batch_norm_training")
def _batch_norm_training(call: OpCall):
    return lax.batch_norm_training(*call.operands, **_params(call))


@register("batch_norm_inference")
def _batch_norm_inference(call: OpCall):
    return lax.batch_norm_inference(*call.operands, **_params(call))


@register("batch_norm_grad")
def _batch_norm_grad(call: OpCall):
    return lax.batch_norm_grad(*call.operands, **_params(call))
