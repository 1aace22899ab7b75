"""StableHLO dot_general, convolution and dynamic_conv -> numxla.

``chlo.ragged_dot`` is not an XLA op (it is a CHLO decomposition target with
no entry in the operation semantics), so it is deliberately left unmapped.
"""
from __future__ import annotations

import numpy as np

import numxla.primitives as lax
from .harness import OpCall, register


def _precision(call: OpCall):
    config = call.attributes.get("precision_config")
    return tuple(config) if config else None


@register("dot_general")
def _dot_general(call: OpCall):
    # ``algorithm`` (operand/accumulation precision hints) does not change the
    # reference semantics, like ``precision_config``.
    dn = call.attributes["dot_dimension_numbers"]
    return lax.dot_general(
        *call.operands,
        ((dn["lhs_contracting_dimensions"], dn["rhs_contracting_dimensions"]),
         (dn["lhs_batching_dimensions"], dn["rhs_batching_dimensions"])),
        precision=_precision(call),
        preferred_element_type=call.result_types[0].element_type)


def _conv_dimension_numbers(dn: dict) -> lax.ConvDimensionNumbers:
    return lax.ConvDimensionNumbers(
        (dn["input_batch_dimension"], dn["input_feature_dimension"],
         *dn["input_spatial_dimensions"]),
        (dn["kernel_output_feature_dimension"], dn["kernel_input_feature_dimension"],
         *dn["kernel_spatial_dimensions"]),
        (dn["output_batch_dimension"], dn["output_feature_dimension"],
         *dn["output_spatial_dimensions"]))


def _convolution(call: OpCall, lhs, rhs, padding):
    attrs = call.attributes
    dnums = _conv_dimension_numbers(attrs["dimension_numbers"])
    n = len(dnums.lhs_spec) - 2
    reversed_dims = [d for d, rev in zip(dnums.rhs_spec[2:], attrs.get("window_reversal") or ())
                     if rev]
    if reversed_dims:  # window_reversal: the kernel's spatial dimensions run backwards
        rhs = lax.rev(rhs, reversed_dims)
    return lax.conv_general_dilated(
        lhs, rhs,
        window_strides=attrs.get("window_strides") or (1,) * n,
        padding=[tuple(p) for p in padding] if padding is not None else [(0, 0)] * n,
        lhs_dilation=attrs.get("lhs_dilation") or (1,) * n,
        rhs_dilation=attrs.get("rhs_dilation") or (1,) * n,
        dimension_numbers=dnums,
        feature_group_count=attrs.get("feature_group_count", 1),
        batch_group_count=attrs.get("batch_group_count", 1),
        precision=_precision(call),
        preferred_element_type=call.result_types[0].element_type)


@register("convolution")
def _convolution_op(call: OpCall):
    lhs, rhs = call.operands
    return _convolution(call, lhs, rhs, call.attributes.get("padding"))


@register("dynamic_conv")
def _dynamic_conv(call: OpCall):
    # StableHLO's convolution whose padding is a third (constant) operand.
    lhs, rhs, padding = call.operands
    return _convolution(call, lhs, rhs, np.asarray(padding).tolist())
