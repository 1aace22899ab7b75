"""Batch normalisation: BatchNormTraining, BatchNormInference, BatchNormGrad.

For each feature ``l`` of dimension ``feature_index`` of the operand ``x``,
the statistics run over every other dimension (``N`` elements per feature):

* training:  ``mu_l = sum(x) / N``, ``var_l = sum((x - mu_l)^2) / N`` (biased),
  ``y = scale_l * (x - mu_l) / sqrt(var_l + epsilon) + offset_l``;
  results ``(y, mu, var)``.
* inference: the same ``y`` from the given ``mean`` and ``variance``.
* grad (the VJP of training with respect to operand, scale and offset, given
  the statistics): with ``c_l = sum(dy * (x - mu_l)) / (N * (var_l + epsilon))``
  and ``d_l = sum(dy) / N``,
  ``dx = scale_l / sqrt(var_l + epsilon) * (dy - d_l - c_l * (x - mu_l))``,
  ``dscale_l = sum(dy * (x - mu_l)) / sqrt(var_l + epsilon)``,
  ``doffset_l = sum(dy)``; results ``(dx, dscale, doffset)``.

``feature_index`` may be negative (counted from the end, as Python does).
f16 and bf16 values are computed in f32 and rounded once at the end.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from numxla.tracer.core import AbstractValue, Primitive, ShapeError, abstractify, array_value
from numxla.tracer.shapes import PrimitiveType as PT, bf16_from_f32, bf16_to_f32

__all__ = ["batch_norm_training", "batch_norm_inference", "batch_norm_grad"]


# -- shape rules ----------------------------------------------------------------------

def _check(op: str, feature_index: int, operand: AbstractValue,
           per_feature: dict[str, AbstractValue],
           same_shape: dict[str, AbstractValue] | None = None) -> AbstractValue:
    """Validate the operands; returns the aval of the per-feature results."""
    same_shape = same_shape or {}
    everything = (operand, *same_shape.values(), *per_feature.values())
    if operand.ndim < 1:
        raise ShapeError(op, "operand must have rank >= 1", *everything)
    if not 0 <= feature_index < operand.ndim:
        raise ShapeError(op, f"feature_index {feature_index} is out of range for an operand "
                             f"of rank {operand.ndim}", *everything)
    if not operand.element_type.is_floating:
        raise ShapeError(op, f"operand element type {operand.element_type.short_name} must be "
                             f"floating point", *everything)
    features = operand.dimensions[feature_index]
    for name, aval in {**same_shape, **per_feature}.items():
        if aval.element_type is not operand.element_type:
            raise ShapeError(op, f"{name} element type {aval.element_type.short_name} must be "
                                 f"the operand's {operand.element_type.short_name}", *everything)
    for name, aval in same_shape.items():
        if aval.dimensions != operand.dimensions:
            raise ShapeError(op, f"{name} must have the operand's shape", *everything)
    for name, aval in per_feature.items():
        if aval.dimensions != (features,):
            raise ShapeError(op, f"{name} must be 1-D of the feature count {features} "
                                 f"(operand dimension {feature_index}), got {aval.shape}",
                             *everything)
    return array_value(operand.element_type, (features,))


batch_norm_training_p = Primitive("batch_norm_training", multiple_results=True)
batch_norm_inference_p = Primitive("batch_norm_inference")
batch_norm_grad_p = Primitive("batch_norm_grad", multiple_results=True)


@batch_norm_training_p.def_abstract_eval
def _training_rule(operand, scale, offset, *, epsilon: float, feature_index: int):
    stats = _check("batch_norm_training", feature_index, operand,
                   {"scale": scale, "offset": offset})
    return [array_value(operand.element_type, operand.dimensions), stats, stats]


@batch_norm_inference_p.def_abstract_eval
def _inference_rule(operand, scale, offset, mean, variance, *, epsilon: float,
                    feature_index: int):
    _check("batch_norm_inference", feature_index, operand,
           {"scale": scale, "offset": offset, "mean": mean, "variance": variance})
    return array_value(operand.element_type, operand.dimensions)


@batch_norm_grad_p.def_abstract_eval
def _grad_rule(operand, scale, mean, variance, grad_output, *, epsilon: float,
               feature_index: int):
    stats = _check("batch_norm_grad", feature_index, operand,
                   {"scale": scale, "mean": mean, "variance": variance},
                   {"grad_output": grad_output})
    return [array_value(operand.element_type, operand.dimensions), stats, stats]


# -- reference semantics ----------------------------------------------------------------

class _Features:
    """Values in the compute type, per-feature vectors broadcast along ``feature_index``."""

    def __init__(self, operand: np.ndarray, feature_index: int):
        self.type = PT.BF16 if operand.dtype == np.uint16 else PT.from_dtype(operand.dtype)
        self.work = np.float64 if self.type is PT.F64 else np.float32
        self.ndim, self.axis = operand.ndim, feature_index
        self.others = tuple(d for d in range(operand.ndim) if d != feature_index)
        self.count = int(np.prod([operand.shape[d] for d in self.others], dtype=np.int64))

    def load(self, x: np.ndarray) -> np.ndarray:
        return (bf16_to_f32(x) if self.type is PT.BF16 else x).astype(self.work)

    def column(self, v: np.ndarray) -> np.ndarray:
        """A per-feature vector (in the compute type) shaped to broadcast against the operand."""
        shape = [1] * self.ndim
        shape[self.axis] = -1
        return v.reshape(shape)

    def load_column(self, v: np.ndarray) -> np.ndarray:
        return self.column(self.load(v))

    def sum(self, x: np.ndarray) -> np.ndarray:
        return x.sum(axis=self.others)

    def mean(self, x: np.ndarray) -> np.ndarray:
        return self.sum(x) / self.work(self.count)

    def store(self, x: np.ndarray) -> np.ndarray:
        return bf16_from_f32(x) if self.type is PT.BF16 else x.astype(self.type.numpy_dtype)


def _normalize(f: _Features, x, scale, offset, mean, var, epsilon: float) -> np.ndarray:
    """``scale * (x - mean) / sqrt(var + epsilon) + offset`` (per-feature columns)."""
    return scale * (x - mean) / np.sqrt(var + f.work(epsilon)) + offset


@batch_norm_training_p.def_impl
def _training_impl(operand, scale, offset, *, epsilon: float, feature_index: int):
    f = _Features(operand, feature_index)
    x = f.load(operand)
    with np.errstate(all="ignore"):
        mean = f.mean(x)
        var = f.mean((x - f.column(mean)) ** 2)
        y = _normalize(f, x, f.load_column(scale), f.load_column(offset), f.column(mean),
                       f.column(var), epsilon)
    return f.store(y), f.store(mean), f.store(var)


@batch_norm_inference_p.def_impl
def _inference_impl(operand, scale, offset, mean, variance, *, epsilon: float,
                    feature_index: int):
    f = _Features(operand, feature_index)
    with np.errstate(all="ignore"):
        y = _normalize(f, f.load(operand), f.load_column(scale), f.load_column(offset),
                       f.load_column(mean), f.load_column(variance), epsilon)
    return f.store(y)


@batch_norm_grad_p.def_impl
def _grad_impl(operand, scale, mean, variance, grad_output, *, epsilon: float,
               feature_index: int):
    f = _Features(operand, feature_index)
    x, dy = f.load(operand), f.load(grad_output)
    with np.errstate(all="ignore"):
        var_eps = f.load_column(variance) + f.work(epsilon)
        centered = x - f.load_column(mean)
        c = f.column(f.mean(dy * centered)) / var_eps
        d = f.column(f.mean(dy))
        grad_operand = f.load_column(scale) / np.sqrt(var_eps) * (dy - d - c * centered)
        grad_scale = f.sum(dy * centered / np.sqrt(var_eps))
        grad_offset = f.sum(dy)
    return f.store(grad_operand), f.store(grad_scale), f.store(grad_offset)


# -- user functions -----------------------------------------------------------------------

def _feature_index(operand: Any, feature_index: int) -> int:
    """``feature_index`` with a Python-style negative resolved (out of range kept, so the
    shape rule reports it)."""
    index, rank = int(feature_index), abstractify(operand).ndim
    return index + rank if -rank <= index < 0 else index


def batch_norm_training(operand: Any, scale: Any, offset: Any, epsilon: float,
                        feature_index: int) -> tuple[Any, Any, Any]:
    """XLA's BatchNormTraining: ``(output, batch_mean, batch_var)``, normalising
    ``operand`` over every dimension but ``feature_index`` (biased variance)."""
    return tuple(batch_norm_training_p.bind(
        operand, scale, offset, epsilon=float(epsilon),
        feature_index=_feature_index(operand, feature_index)))


def batch_norm_inference(operand: Any, scale: Any, offset: Any, mean: Any, variance: Any,
                         epsilon: float, feature_index: int) -> Any:
    """XLA's BatchNormInference: ``operand`` normalised with the given ``mean`` and
    ``variance``, then scaled and offset per feature."""
    return batch_norm_inference_p.bind(
        operand, scale, offset, mean, variance, epsilon=float(epsilon),
        feature_index=_feature_index(operand, feature_index))


def batch_norm_grad(operand: Any, scale: Any, mean: Any, variance: Any, grad_output: Any,
                    epsilon: float, feature_index: int) -> tuple[Any, Any, Any]:
    """XLA's BatchNormGrad: ``(grad_operand, grad_scale, grad_offset)``, the
    gradients of BatchNormTraining's output (cotangent ``grad_output``) with
    respect to operand, scale and offset, given the batch ``mean`` and ``variance``."""
    return tuple(batch_norm_grad_p.bind(
        operand, scale, mean, variance, grad_output, epsilon=float(epsilon),
        feature_index=_feature_index(operand, feature_index)))
