"""Dot, DotGeneral and Conv (ConvWithGeneralPadding, ConvGeneralDilated).

``dot_general(lhs, rhs, dimension_numbers)`` with
``dimension_numbers = ((lhs_contracting, rhs_contracting), (lhs_batch,
rhs_batch))``: the result's dimensions are the batch dimensions, then the
lhs free dimensions, then the rhs free dimensions (XLA's and ``jax.lax``'s
order).

``conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation,
rhs_dilation, dimension_numbers, feature_group_count, batch_group_count)``
is XLA's Conv in its most general form: the base area (``lhs``'s spatial
dimensions) is dilated by ``lhs_dilation`` (``d - 1`` zeros between
elements), padded (negative padding crops), and the kernel window, dilated
by ``rhs_dilation``, moves over it by ``window_strides``.  Feature groups
split the input and output features into ``feature_group_count``
independent convolutions; batch groups split the batch and the output
features into ``batch_group_count`` of them.

Both ops take ``precision`` (``None`` or a pair of :class:`Precision`; it
does not change NumPy's results) and ``preferred_element_type`` (the result
type, accumulated in).
"""
from __future__ import annotations

import enum
import string
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue, ShapeError, TypedPrimitive, abstractify, array_value
from numxla.tracer.shapes import PrimitiveType as PT, bf16_from_f32, bf16_to_f32

from ._util import as_int_tuple, check_kinds
from .dtypes import canonical_type
from .elementwise import _mul, promote

__all__ = ["dot_general", "dot", "DotDimensionNumbers", "Precision", "ConvDimensionNumbers",
           "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_with_general_padding", "padtype_to_pads"]

DotDimensionNumbers = tuple[tuple[tuple[int, ...], tuple[int, ...]],
                            tuple[tuple[int, ...], tuple[int, ...]]]

ALL_KINDS = ("pred", "signed", "unsigned", "float", "complex")


# --------------------------------------------------------------------------
# precision and result types, shared by dot_general and conv_general_dilated
# --------------------------------------------------------------------------

class Precision(enum.Enum):
    """XLA's ``PrecisionConfig.Precision`` of one operand (``jax.lax.Precision``)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def from_any(cls, value: Any) -> "Precision":
        if isinstance(value, cls):
            return value
        aliases = {"bfloat16": "DEFAULT", "fastest": "DEFAULT", "tensorfloat32": "HIGH",
                   "float32": "HIGHEST"}
        if isinstance(value, str):
            name = aliases.get(value.lower(), value.upper())
            if name in cls.__members__:
                return cls[name]
        raise ValueError(f"precision {value!r} is not a Precision (DEFAULT, HIGH, HIGHEST)")


def canonical_precision(precision: Any) -> tuple[Precision, Precision] | None:
    """``None``, or one precision for both operands, or a pair -> ``None`` or a pair."""
    if precision is None:
        return None
    if isinstance(precision, (Precision, str)):
        p = Precision.from_any(precision)
        return (p, p)
    pair = tuple(precision)
    if len(pair) != 2:
        raise ValueError(f"precision must be one value or a pair, got {precision!r}")
    return (Precision.from_any(pair[0]), Precision.from_any(pair[1]))


# operand kind -> the kinds its preferred_element_type may have (JAX's table)
_PREFERRED_KINDS = {"pred": ALL_KINDS, "signed": ("signed", "float"),
                    "unsigned": ("signed", "unsigned", "float"), "float": ("float",),
                    "complex": ("complex",)}


def _result_type(op: str, operand: PT, preferred: PT | None, *avals: AbstractValue) -> PT:
    """The result element type: ``preferred`` if given and compatible (JAX's
    table of kinds; XLA's rule that only real floats may narrow, e.g. f32 -> f16)."""
    if preferred is None or preferred is operand:
        return operand
    if _kind(preferred) not in _PREFERRED_KINDS[_kind(operand)]:
        raise ShapeError(op, f"preferred_element_type {preferred.short_name} is incompatible "
                             f"with operand type {operand.short_name} (allowed: integral->"
                             f"integral or floating, floating->floating, complex->complex; "
                             f"signed stays signed)", *avals)
    if not operand.is_floating and preferred.bit_width < operand.bit_width:
        raise ShapeError(op, f"preferred_element_type {preferred.short_name} must not be "
                             f"narrower than the operand type {operand.short_name}", *avals)
    return preferred


def _kind(t: PT) -> str:
    return ("pred" if t is PT.PRED else "complex" if t.is_complex else
            "float" if t.is_floating else "signed" if t.is_signed else "unsigned")


def _bf16_values(lhs: np.ndarray, rhs: np.ndarray, operand_types) -> tuple:
    """bf16 operands (uint16 words) as f32 values, and the operands' element type."""
    t = operand_types[0] if operand_types else PT.from_dtype(lhs.dtype)
    if t is PT.BF16:
        return bf16_to_f32(lhs), bf16_to_f32(rhs), t
    return lhs, rhs, t


def _contract(spec: str, lhs: np.ndarray, rhs: np.ndarray, out_type: PT) -> np.ndarray:
    """``np.einsum(spec, lhs, rhs)`` computed as XLA does: products summed in
    the result type (f16/bf16 in f32, rounded once); PRED is OR of ANDs;
    complex elements that come out infinite or NaN summed again with XLA's
    product (:func:`_redo_non_finite`)."""
    if out_type is PT.PRED:
        return np.einsum(spec, lhs.astype(np.int64), rhs.astype(np.int64), optimize=True) != 0
    out_np = np.dtype(np.float32) if out_type is PT.BF16 else out_type.numpy_dtype
    acc = np.result_type(lhs.dtype, out_np)
    if acc == np.float16:
        acc = np.dtype(np.float32)
    with np.errstate(all="ignore"):
        lhs, rhs = lhs.astype(acc), rhs.astype(acc)
        result = np.einsum(spec, lhs, rhs, optimize=True)
        if acc.kind == "c":
            result = _redo_non_finite(spec, lhs, rhs, result)
        if out_type is PT.BF16:
            return bf16_from_f32(result.astype(np.float32))
        return result.astype(out_np)


def _redo_non_finite(spec: str, lhs: np.ndarray, rhs: np.ndarray,
                     result: np.ndarray) -> np.ndarray:
    """``result`` (complex) with each element that is infinite or NaN in either
    part computed again as XLA's element-wise products (``elementwise._mul``)
    summed in order over the contracted indices.  XLA's vector dot does this;
    its matrix products (Eigen) can give NaN + NaN i where a product is
    ``NaN - inf i``, as BLAS does (and ``einsum``, which may call it): XLA
    leaves this open, numxla takes the sum of products."""
    bad = ~(np.isfinite(result.real) & np.isfinite(result.imag))
    if not bad.any():
        return result
    operands, out = spec.split("->")
    lhs_idx, rhs_idx = operands.split(",")
    axes = out + "".join(ch for ch in dict.fromkeys(lhs_idx + rhs_idx) if ch not in out)
    size = dict(zip(lhs_idx, lhs.shape)) | dict(zip(rhs_idx, rhs.shape))

    def spread(idx: str, x: np.ndarray) -> np.ndarray:
        """``x`` with axes ``axes`` (size 1 where it has no such index), broadcast."""
        mine = "".join(ch for ch in axes if ch in idx)
        view = np.einsum(f"{idx}->{mine}", x).reshape([size[ch] if ch in idx else 1
                                                      for ch in axes])
        return np.broadcast_to(view, [size[ch] for ch in axes])

    where = np.nonzero(bad) if out else ()      # a rank-0 result: its one element
    count = len(where[0]) if out else 1
    terms_l = spread(lhs_idx, lhs)[where].reshape(count, -1)
    terms_r = spread(rhs_idx, rhs)[where].reshape(count, -1)
    total = np.zeros(count, result.dtype)
    for p in range(terms_l.shape[1]):
        total = total + _mul(terms_l[:, p], terms_r[:, p])
    result = np.array(result, copy=True)
    result[where] = total if out else total[0]
    return result


def _check_operand_types(op: str, lhs: AbstractValue, rhs: AbstractValue) -> None:
    if lhs.element_type is not rhs.element_type:
        raise ShapeError(op, f"operand element types must be equal, got "
                             f"{lhs.element_type.short_name} and {rhs.element_type.short_name}",
                         lhs, rhs)
    check_kinds(op, lhs, ALL_KINDS)


def _canonical_preferred(preferred_element_type: Any) -> PT | None:
    return None if preferred_element_type is None else canonical_type(preferred_element_type)


# --------------------------------------------------------------------------
# DotGeneral and Dot
# --------------------------------------------------------------------------

dot_general_p = TypedPrimitive("dot_general")  # bf16 operands arrive as uint16 words


def _free_dims(rank: int, *used: Sequence[int]) -> tuple[int, ...]:
    taken = {d for group in used for d in group}
    return tuple(d for d in range(rank) if d not in taken)


@dot_general_p.def_abstract_eval
def _dot_general_rule(lhs: AbstractValue, rhs: AbstractValue, *,
                      dimension_numbers: DotDimensionNumbers, precision=None,
                      preferred_element_type=None) -> AbstractValue:
    op = "dot_general"
    (lc, rc), (lb, rb) = dimension_numbers
    for name, dims, aval in (("lhs_contracting_dimensions", lc, lhs),
                             ("rhs_contracting_dimensions", rc, rhs),
                             ("lhs_batch_dimensions", lb, lhs),
                             ("rhs_batch_dimensions", rb, rhs)):
        for d in dims:
            if not 0 <= d < aval.ndim:
                raise ShapeError(op, f"{name} {dims}: {d} is out of range for rank {aval.ndim}",
                                 lhs, rhs)
    for side, c, b in (("lhs", lc, lb), ("rhs", rc, rb)):
        if len(set(c) | set(b)) != len(c) + len(b):
            raise ShapeError(op, f"{side} contracting {c} and batch {b} dimensions must be "
                                 f"distinct (each dimension at most once)", lhs, rhs)
    if len(lc) != len(rc):
        raise ShapeError(op, f"lhs_contracting_dimensions {lc} and rhs_contracting_dimensions "
                             f"{rc} must have the same length", lhs, rhs)
    if len(lb) != len(rb):
        raise ShapeError(op, f"lhs_batch_dimensions {lb} and rhs_batch_dimensions {rb} must "
                             f"have the same length", lhs, rhs)
    for what, ldims, rdims in (("contracting", lc, rc), ("batch", lb, rb)):
        for a, b in zip(ldims, rdims):
            if lhs.dimensions[a] != rhs.dimensions[b]:
                raise ShapeError(op, f"{what} dimension sizes differ: lhs dimension {a} is "
                                     f"{lhs.dimensions[a]}, rhs dimension {b} is "
                                     f"{rhs.dimensions[b]}", lhs, rhs)
    _check_operand_types(op, lhs, rhs)
    out_type = _result_type(op, lhs.element_type, preferred_element_type, lhs, rhs)
    dims = (tuple(lhs.dimensions[d] for d in lb)
            + tuple(lhs.dimensions[d] for d in _free_dims(lhs.ndim, lc, lb))
            + tuple(rhs.dimensions[d] for d in _free_dims(rhs.ndim, rc, rb)))
    weak = lhs.weak_type and rhs.weak_type and preferred_element_type is None
    return array_value(out_type, dims, weak)


@dot_general_p.def_impl
def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision=None,
                      preferred_element_type=None, operand_types=None):
    lhs, rhs, operand_type = _bf16_values(lhs, rhs, operand_types)
    (lc, rc), (lb, rb) = dimension_numbers
    letters = iter(string.ascii_letters)
    lhs_idx: list[str | None] = [None] * lhs.ndim
    rhs_idx: list[str | None] = [None] * rhs.ndim
    batch = []
    for a, b in zip(lb, rb):
        lhs_idx[a] = rhs_idx[b] = ch = next(letters)
        batch.append(ch)
    for a, b in zip(lc, rc):
        lhs_idx[a] = rhs_idx[b] = next(letters)
    free: list[str] = []
    for idx in (lhs_idx, rhs_idx):
        for i, ch in enumerate(idx):
            if ch is None:
                idx[i] = next(letters)
                free.append(idx[i])
    spec = f"{''.join(lhs_idx)},{''.join(rhs_idx)}->{''.join(batch + free)}"
    return _contract(spec, lhs, rhs, preferred_element_type or operand_type)


def dot_general(lhs: Any, rhs: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """XLA's DotGeneral (``jax.lax.dot_general`` signature): sum of products
    over the contracting dimensions, batched over the batch dimensions."""
    op = "dot_general"
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise ShapeError(op, f"dimension_numbers must be ((lhs_contracting, rhs_contracting), "
                             f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}") from None
    dn = ((as_int_tuple(op, "lhs_contracting_dimensions", lc),
           as_int_tuple(op, "rhs_contracting_dimensions", rc)),
          (as_int_tuple(op, "lhs_batch_dimensions", lb),
           as_int_tuple(op, "rhs_batch_dimensions", rb)))
    lhs, rhs = promote(lhs, rhs)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn,
                              precision=canonical_precision(precision),
                              preferred_element_type=_canonical_preferred(preferred_element_type))


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """XLA's Dot: vector·vector, matrix·vector, vector·matrix or matrix·matrix,
    contracting the last dimension of ``lhs`` with the first of ``rhs``."""
    la, ra = abstractify(lhs), abstractify(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise ShapeError("dot", f"operands must have rank 1 or 2, got ranks {la.ndim} and "
                                f"{ra.ndim}", la, ra)
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


# --------------------------------------------------------------------------
# Conv
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class ConvDimensionNumbers:
    """Where a convolution's dimensions are (``jax.lax.ConvDimensionNumbers``):

    * ``lhs_spec``: (batch, feature, spatial...) dimensions of the input;
    * ``rhs_spec``: (output feature, input feature, spatial...) of the kernel;
    * ``out_spec``: (batch, feature, spatial...) of the output.

    The i-th spatial dimensions of the three correspond.  Unpacks like JAX's
    NamedTuple: ``lhs_spec, rhs_spec, out_spec = dn``.
    """

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]

    def __post_init__(self):
        for name in ("lhs_spec", "rhs_spec", "out_spec"):
            object.__setattr__(self, name,
                               as_int_tuple("conv_general_dilated", name, getattr(self, name)))

    def __iter__(self):
        return iter((self.lhs_spec, self.rhs_spec, self.out_spec))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """``None`` (``NCHW``/``OIHW``/``NCHW``), three spec strings such as
    ``("NHWC", "HWIO", "NHWC")``, or three sequences of dimension numbers, as
    a :class:`ConvDimensionNumbers`.  Spatial letters are any characters
    other than N, C (lhs, out) and O, I (rhs); they are matched by letter
    and ordered as they appear in the rhs spec."""
    op = "conv_general_dilated"
    rank = len(lhs_shape)
    if len(rhs_shape) != rank:
        raise ShapeError(op, f"lhs and rhs must have the same rank, got {len(lhs_shape)} and "
                             f"{len(rhs_shape)} (shapes {tuple(lhs_shape)} and "
                             f"{tuple(rhs_shape)})")
    if dimension_numbers is None:
        default = tuple(range(rank))
        return ConvDimensionNumbers(default, default, default)
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    specs = tuple(dimension_numbers)
    if len(specs) != 3:
        raise ShapeError(op, f"dimension_numbers must be (lhs_spec, rhs_spec, out_spec), got "
                             f"{dimension_numbers!r}")
    if not all(isinstance(s, str) for s in specs):
        return ConvDimensionNumbers(*specs)
    lhs_s, rhs_s, out_s = specs
    for spec, pair in ((lhs_s, "NC"), (rhs_s, "OI"), (out_s, "NC")):
        if len(spec) != rank:
            raise ShapeError(op, f"dimension_numbers spec {spec!r} must have one letter per "
                                 f"dimension of the rank-{rank} operands")
        if any(spec.count(c) != 1 for c in pair) or len(set(spec)) != len(spec):
            raise ShapeError(op, f"dimension_numbers spec {spec!r} must contain {pair[0]!r} "
                                 f"and {pair[1]!r} exactly once and no repeated letter")
    spatial = [c for c in rhs_s if c not in "OI"]
    if set(lhs_s) - set("NC") != set(spatial) or set(out_s) - set("NC") != set(spatial):
        raise ShapeError(op, f"dimension_numbers {specs!r}: spatial letters must be the same "
                             f"in the three specs")
    return ConvDimensionNumbers(
        tuple(lhs_s.index(c) for c in "NC" + "".join(spatial)),
        tuple(rhs_s.index(c) for c in "OI" + "".join(spatial)),
        tuple(out_s.index(c) for c in "NC" + "".join(spatial)))


def _dilate(size: int, factor: int) -> int:
    """Size of a dimension with ``factor - 1`` holes between its elements."""
    return 0 if size == 0 else 1 + factor * (size - 1)


def _window_count(padded: int, window: int, stride: int) -> int:
    """Number of valid window positions (XLA's StridedBound)."""
    return 0 if window > padded else (padded - window) // stride + 1


def padtype_to_pads(in_shape: Sequence[int], window_shape: Sequence[int],
                    window_strides: Sequence[int], padding: str) -> tuple[tuple[int, int], ...]:
    """Explicit (low, high) padding for ``"SAME"``, ``"SAME_LOWER"`` or ``"VALID"``:
    SAME pads so the output has ``ceil(in / stride)`` elements, the odd element
    at the end (SAME) or at the start (SAME_LOWER)."""
    kind = padding.upper()
    if kind == "VALID":
        return tuple((0, 0) for _ in in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ShapeError("conv_general_dilated",
                         f"padding {padding!r} must be 'SAME', 'SAME_LOWER', 'VALID' or "
                         f"(low, high) pairs")
    pads = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = -(-size // stride)
        total = max(0, (out - 1) * stride + window - size)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if kind == "SAME" else (large, small))
    return tuple(pads)


conv_general_dilated_p = TypedPrimitive("conv_general_dilated")


@conv_general_dilated_p.def_abstract_eval
def _conv_rule(lhs: AbstractValue, rhs: AbstractValue, *, window_strides: tuple[int, ...],
               padding: tuple[tuple[int, int], ...], lhs_dilation: tuple[int, ...],
               rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
               feature_group_count: int, batch_group_count: int, precision=None,
               preferred_element_type=None) -> AbstractValue:
    op = "conv_general_dilated"

    def fail(message: str):
        raise ShapeError(op, message, lhs, rhs)

    if lhs.ndim != rhs.ndim:
        fail(f"lhs and rhs must have the same rank, got {lhs.ndim} and {rhs.ndim}")
    if lhs.ndim < 2:
        fail(f"operands must have rank >= 2 (batch and feature dimensions), got {lhs.ndim}")
    n = lhs.ndim - 2
    for name, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), dimension_numbers):
        if sorted(spec) != list(range(lhs.ndim)):
            fail(f"dimension_numbers {name} {spec} must be a permutation of 0..{lhs.ndim - 1}")
    for name, values in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                         ("rhs_dilation", rhs_dilation), ("padding", padding)):
        if len(values) != n:
            fail(f"{name} {values} must have one entry per spatial dimension ({n})")
    for name, values in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                         ("rhs_dilation", rhs_dilation)):
        if any(v < 1 for v in values):
            fail(f"{name} {values} must be positive")
    for name, count in (("feature_group_count", feature_group_count),
                        ("batch_group_count", batch_group_count)):
        if count < 1:
            fail(f"{name} {count} must be positive")
    if feature_group_count > 1 and batch_group_count > 1:
        fail(f"at most one of feature_group_count ({feature_group_count}) and "
             f"batch_group_count ({batch_group_count}) may be > 1")
    _check_operand_types(op, lhs, rhs)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    batch, features = lhs.dimensions[lhs_spec[0]], lhs.dimensions[lhs_spec[1]]
    out_features, in_features = rhs.dimensions[rhs_spec[0]], rhs.dimensions[rhs_spec[1]]
    if features % feature_group_count:
        fail(f"input feature dimension ({features}) must be divisible by "
             f"feature_group_count ({feature_group_count})")
    if features // feature_group_count != in_features:
        fail(f"input feature dimension ({features}) / feature_group_count "
             f"({feature_group_count}) must equal the kernel input feature dimension "
             f"({in_features})")
    for name, count in (("feature_group_count", feature_group_count),
                        ("batch_group_count", batch_group_count)):
        if out_features % count:
            fail(f"kernel output feature dimension ({out_features}) must be divisible by "
                 f"{name} ({count})")
    if batch % batch_group_count:
        fail(f"input batch dimension ({batch}) must be divisible by batch_group_count "
             f"({batch_group_count})")
    out = [0] * lhs.ndim
    out[out_spec[0]], out[out_spec[1]] = batch // batch_group_count, out_features
    for i in range(n):
        size, window = lhs.dimensions[lhs_spec[2 + i]], rhs.dimensions[rhs_spec[2 + i]]
        if window < 1:
            fail(f"kernel spatial dimension {rhs_spec[2 + i]} has size {window}; the window "
                 f"must be non-empty")
        lo, hi = padding[i]
        padded = lo + _dilate(size, lhs_dilation[i]) + hi
        if padded < 0:
            fail(f"padding {padding[i]} of spatial dimension {i} leaves a negative base size "
                 f"({padded})")
        out[out_spec[2 + i]] = _window_count(padded, _dilate(window, rhs_dilation[i]),
                                             window_strides[i])
    out_type = _result_type(op, lhs.element_type, preferred_element_type, lhs, rhs)
    return array_value(out_type, out)


def _dilate_and_pad(x: np.ndarray, padding, lhs_dilation) -> np.ndarray:
    """``x[N, C, spatial...]`` with ``d - 1`` zeros between elements and
    (low, high) padding on each spatial dimension (negative padding crops):
    padded position ``lo + b * d`` holds base element ``b``."""
    sizes = [lo + _dilate(s, d) + hi for s, d, (lo, hi)
             in zip(x.shape[2:], lhs_dilation, padding)]
    out = np.zeros(x.shape[:2] + tuple(sizes), x.dtype)
    target, source = [slice(None)] * 2, [slice(None)] * 2
    for size, base, d, (lo, _) in zip(sizes, x.shape[2:], lhs_dilation, padding):
        first = max(0, -(lo // d))                       # first b with lo + b*d >= 0
        last = min(base, -(-(size - lo) // d))           # first b with lo + b*d >= size
        count = max(0, last - first)
        start = lo + first * d
        target.append(slice(start, start + (count - 1) * d + 1, d) if count else slice(0, 0))
        source.append(slice(first, first + count))
    out[tuple(target)] = x[tuple(source)]
    return out


@conv_general_dilated_p.def_impl
def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision=None,
               preferred_element_type=None, operand_types=None):
    lhs, rhs, operand_type = _bf16_values(lhs, rhs, operand_types)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_type = preferred_element_type or operand_type
    x = _dilate_and_pad(np.transpose(lhs, lhs_spec), padding, lhs_dilation)  # N, C, S...
    k = np.transpose(rhs, rhs_spec)                                         # O, I, K...
    n = x.ndim - 2
    windows = [_dilate(w, d) for w, d in zip(k.shape[2:], rhs_dilation)]
    counts = [_window_count(p, w, s) for p, w, s in zip(x.shape[2:], windows, window_strides)]
    batch, fg, bg = x.shape[0], feature_group_count, batch_group_count
    out_features = k.shape[0]
    if 0 in counts:  # no window position (zeros are also +0.0 as bf16 words)
        result = np.zeros((batch // bg, out_features, *counts), out_type.numpy_dtype)
    else:
        # patches[N, C, P..., K...]: every window position P, every kernel tap K.
        view = np.lib.stride_tricks.sliding_window_view(x, windows, axis=tuple(range(2, 2 + n)))
        view = view[(slice(None),) * 2 + tuple(slice(None, None, s) for s in window_strides)
                    + tuple(slice(None, None, d) for d in rhs_dilation)]
        patches = view.reshape(bg, batch // bg, fg, x.shape[1] // fg, *view.shape[2:])
        kernel = k.reshape(bg, fg, out_features // (bg * fg), *k.shape[1:])
        p, t = string.ascii_lowercase[:n], string.ascii_lowercase[n:2 * n]
        # G: batch group, N: batch, F: feature group, C: input feature, O: output feature;
        # p: window position, t: kernel tap (one letter per spatial dimension).
        spec = f"GNFC{p}{t},GFOC{t}->NGFO{p}"
        result = _contract(spec, patches, kernel, out_type)
        result = result.reshape(batch // bg, out_features, *counts)
    return np.transpose(result, np.argsort(out_spec))


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """XLA's Conv in its general form (``jax.lax.conv_general_dilated`` signature).

    ``padding`` is ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or a (low, high)
    pair per spatial dimension (negative crops); ``dimension_numbers`` is
    ``None``, three spec strings such as ``("NHWC", "HWIO", "NHWC")`` or a
    :class:`ConvDimensionNumbers`; ``window_strides`` and the dilations are
    in the order of the rhs spec's spatial dimensions."""
    op = "conv_general_dilated"
    lhs, rhs = promote(lhs, rhs)
    la, ra = abstractify(lhs), abstractify(rhs)
    dnums = conv_dimension_numbers(la.dimensions, ra.dimensions, dimension_numbers)
    n = max(la.ndim - 2, 0)
    strides = as_int_tuple(op, "window_strides", window_strides)
    lhs_dil = (1,) * n if lhs_dilation is None else as_int_tuple(op, "lhs_dilation", lhs_dilation)
    rhs_dil = (1,) * n if rhs_dilation is None else as_int_tuple(op, "rhs_dilation", rhs_dilation)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dil):
            raise ShapeError(op, f"string padding {padding!r} is not defined with lhs_dilation "
                                 f"{lhs_dil}; give explicit (low, high) pairs", la, ra)
        for name, values in (("window_strides", strides), ("rhs_dilation", rhs_dil)):
            if len(values) != n:
                raise ShapeError(op, f"{name} {values} must have one entry per spatial "
                                     f"dimension ({n})", la, ra)
        if all(sorted(spec) == list(range(la.ndim)) for spec in dnums):
            in_sizes = [la.dimensions[d] for d in dnums.lhs_spec[2:]]
            windows = [_dilate(ra.dimensions[d], r) for d, r in zip(dnums.rhs_spec[2:], rhs_dil)]
            pads = padtype_to_pads(in_sizes, windows, strides, padding)
        else:  # the shape rule names the bad dimension numbers
            pads = ((0, 0),) * n
    else:
        try:
            pads = tuple((int(lo), int(hi)) for lo, hi in padding)
        except (TypeError, ValueError):
            raise ShapeError(op, f"padding must be a string or (low, high) pairs, got "
                                 f"{padding!r}", la, ra) from None
    return conv_general_dilated_p.bind(
        lhs, rhs, window_strides=strides, padding=pads, lhs_dilation=lhs_dil,
        rhs_dilation=rhs_dil, dimension_numbers=dnums,
        feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count),
        precision=canonical_precision(precision),
        preferred_element_type=_canonical_preferred(preferred_element_type))


def conv(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: str,
         precision: Any = None, preferred_element_type: Any = None) -> Any:
    """XLA's Conv: ``lhs[N, C, spatial...]`` by ``rhs[O, I, spatial...]`` with
    ``"SAME"`` or ``"VALID"`` padding."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Any,
                              lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Any:
    """XLA's ConvWithGeneralPadding: ``conv`` with explicit (low, high) padding
    and lhs/rhs dilation, in the ``NCHW``/``OIHW`` layout."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)
