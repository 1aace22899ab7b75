"""StableHLO gather, dynamic_gather and scatter -> numxla (XLA's explicit
``index_vector_dim`` is passed through; numxla moves it last)."""
from __future__ import annotations

import numpy as np

import numxla.primitives as lax
from .harness import OpCall, register


def _gather_dnums(attrs: dict) -> dict:
    dn = attrs["dimension_numbers"]
    return dict(offset_dims=dn["offset_dims"], collapsed_slice_dims=dn["collapsed_slice_dims"],
                start_index_map=dn["start_index_map"],
                operand_batching_dims=dn["operand_batching_dims"],
                start_indices_batching_dims=dn["start_indices_batching_dims"],
                index_vector_dim=dn["index_vector_dim"])


@register("gather")
def _gather(call: OpCall):
    operand, indices = call.operands
    return lax.gather(operand, indices, _gather_dnums(call.attributes),
                      call.attributes["slice_sizes"],
                      indices_are_sorted=call.attributes.get("indices_are_sorted", False))


@register("dynamic_gather")
def _dynamic_gather(call: OpCall):
    operand, indices, slice_sizes = call.operands
    return lax.gather(operand, indices, _gather_dnums(call.attributes),
                      tuple(int(s) for s in np.asarray(slice_sizes)),
                      indices_are_sorted=call.attributes.get("indices_are_sorted", False))


@register("scatter")
def _scatter(call: OpCall):
    n = (len(call.operands) - 1) // 2
    operands, indices, updates = call.operands[:n], call.operands[n], call.operands[n + 1:]
    dn = call.attributes["scatter_dimension_numbers"]
    dnums = dict(update_window_dims=dn["update_window_dims"],
                 inserted_window_dims=dn["inserted_window_dims"],
                 scatter_dims_to_operand_dims=dn["scatter_dims_to_operand_dims"],
                 operand_batching_dims=dn["input_batching_dims"],
                 scatter_indices_batching_dims=dn["scatter_indices_batching_dims"],
                 index_vector_dim=dn["index_vector_dim"])
    out = lax.scatter(tuple(operands), indices, tuple(updates), dnums,
                      update_computation=call.regions[0],
                      indices_are_sorted=call.attributes.get("indices_are_sorted", False),
                      unique_indices=call.attributes.get("unique_indices", False))
    return out if n > 1 else out[0]
