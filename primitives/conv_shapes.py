"""``jax.lax``'s shape helpers for convolutions and windows: the result
shape of a convolution or reduce_window from its operands' shapes (any
dimension may be -1, e.g. an unknown batch size, as ``stax`` uses them),
and the permutations that dimension-number specs define."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .dot_conv import padtype_to_pads

__all__ = ["conv_shape_tuple", "conv_general_shape_tuple", "conv_general_permutations",
           "conv_transpose_shape_tuple", "reduce_window_shape_tuple"]


def _pads(in_shape: Sequence[int], window: Sequence[int], strides: Sequence[int],
          padding: Any) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        return list(padtype_to_pads(in_shape, window, strides, padding))
    return [tuple(p) for p in padding]


def conv_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                     strides: Sequence[int], pads: Any, batch_group_count: int = 1
                     ) -> tuple[int, ...]:
    """The result shape of an NCHW/OIHW convolution."""
    pads = _pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    padded = np.add(lhs_shape[2:], np.sum(np.array(pads, dtype=np.int64).reshape(-1, 2), axis=1))
    space = np.maximum(0, np.floor_divide(np.subtract(padded, rhs_shape[2:]), strides) + 1)
    batch = int(lhs_shape[0]) // batch_group_count
    return (batch, int(rhs_shape[0])) + tuple(int(d) for d in space)


def conv_general_permutations(dimension_numbers: Sequence[str]
                              ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The permutations that bring each spec (e.g. "NHWC", "HWIO", "NHWC")
    to NCHW / OIHW / NCHW with the rhs's spatial order."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for spec, (a, b) in zip(dimension_numbers, pairs):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(spec) != len(set(spec)):
            raise TypeError(f"invalid convolution dimension spec {spec!r}")
    if not (set(lhs_spec) - set(pairs[0]) == set(rhs_spec) - set(pairs[1])
            == set(out_spec) - set(pairs[2])):
        raise TypeError(f"the specs {dimension_numbers} name different spatial dimensions")

    def perm(spec: str, pair: tuple[str, str]) -> tuple[int, ...]:
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            spatial.sort(key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)
    return perm(lhs_spec, pairs[0]), perm(rhs_spec, pairs[1]), perm(out_spec, pairs[2])


def conv_general_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                             window_strides: Sequence[int], padding: Any,
                             dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """The result shape of ``conv_general_dilated`` (no dilation) with string specs."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm),
                           window_strides, padding)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def conv_transpose_shape_tuple(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                               window_strides: Sequence[int], padding: Any,
                               dimension_numbers: Sequence[str]) -> tuple[int, ...]:
    """The result shape of ``conv_transpose`` with string specs: "SAME" gives
    ``in * stride``, "VALID" ``in * stride + max(k - stride, 0)``, explicit
    pads ``(in - 1) * stride + lo + hi - k + 2``."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = [int(d) for d in np.take(lhs_shape, lhs_perm)]
    rhs_t = [int(d) for d in np.take(rhs_shape, rhs_perm)]
    space = []
    for i, (d, k, s) in enumerate(zip(lhs_t[2:], rhs_t[2:], window_strides)):
        if padding == "SAME":
            space.append(d * s)
        elif padding == "VALID":
            space.append(d * s + max(k - s, 0))
        else:
            lo, hi = padding[i]
            space.append(max(0, (d - 1) * s + lo + hi - k + 2))
    out = (lhs_t[0], rhs_t[0]) + tuple(space)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def reduce_window_shape_tuple(operand_shape: Sequence[int], window_dimensions: Sequence[int],
                              window_strides: Sequence[int], padding: Any,
                              base_dilation: Sequence[int] | None = None,
                              window_dilation: Sequence[int] | None = None) -> tuple[int, ...]:
    """The result shape of ``reduce_window``."""
    shape = np.asarray(operand_shape, dtype=np.int64)
    if base_dilation is not None:
        shape = np.where(shape == 0, 0, (shape - 1) * np.asarray(base_dilation) + 1)
    window = np.asarray(window_dimensions, dtype=np.int64)
    if window_dilation is not None:
        window = np.where(window == 0, 0, (window - 1) * np.asarray(window_dilation) + 1)
    pads = np.array(_pads(shape, window, window_strides, padding), dtype=np.int64)
    padded = shape + pads.sum(axis=1)
    return tuple(int(d) for d in np.maximum(0, (padded - window) // np.asarray(window_strides) + 1))
