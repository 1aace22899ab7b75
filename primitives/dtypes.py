"""Element-type promotion for the user-facing functions.

Primitives themselves never promote: like XLA, ``add`` needs operands of one
element type.  The functions users call promote first, following JAX's
rules in the parts that matter:

* Python scalars are *weak*: ``x * 2`` and ``x + 0.5`` keep ``x``'s element
  type when it is a float; a weak float meeting integers gives f32, a weak
  complex meeting f64 gives c128.
* Among strong types the higher kind wins (pred < integers < floats <
  complex); within a kind the wider type wins; a float meeting complex gives
  the complex type wide enough for both; a signed meeting an unsigned integer
  gives a signed type wide enough for both (s64 for u64, where JAX would go
  to f64; s32 for u32 with x64 off, as JAX narrows its s64).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue, abstractify, default_complex, default_float, \
    default_int
from numxla.tracer.config import canonicalize_type
from numxla.tracer.shapes import PrimitiveType as PT

__all__ = ["result_type", "kind_of", "canonical_type"]

_KINDS = {"pred": 0, "int": 1, "float": 2, "complex": 3}


def kind_of(t: PT) -> str:
    if t is PT.PRED:
        return "pred"
    if t.is_complex:
        return "complex"
    if t.is_floating:
        return "float"
    return "int"


def _width(t: PT) -> int:
    return t.bit_width


_SIGNED = {8: PT.S8, 16: PT.S16, 32: PT.S32, 64: PT.S64}
_FLOATS = {16: PT.F16, 32: PT.F32, 64: PT.F64}
_COMPLEX_FOR_FLOAT = {16: PT.C64, 32: PT.C64, 64: PT.C128}


def _join_strong(a: PT, b: PT) -> PT:
    if a is b:
        return a
    ka, kb = kind_of(a), kind_of(b)
    if _KINDS[ka] != _KINDS[kb]:
        hi, lo = (a, b) if _KINDS[ka] > _KINDS[kb] else (b, a)
        if kind_of(hi) == "complex" and kind_of(lo) == "float":
            return _COMPLEX_FOR_FLOAT[max(_width(lo), _width(hi) // 2)]
        return hi
    if ka == "float":
        if {a, b} == {PT.F16, PT.BF16}:
            return PT.F32
        return a if _width(a) >= _width(b) else b
    if ka == "complex":
        return a if _width(a) >= _width(b) else b
    # integers
    if a.is_signed == b.is_signed:
        return a if _width(a) >= _width(b) else b
    signed, unsigned = (a, b) if a.is_signed else (b, a)
    out = _SIGNED[min(64, max(_width(signed), 2 * _width(unsigned)))]
    # u32 with a signed type of at most 32 bits: s64, which x64 off narrows to s32 (JAX's)
    return out if max(_width(a), _width(b)) == 64 else canonicalize_type(out)


def _join_weak(strong: PT, weak_kind: str) -> PT:
    sk = kind_of(strong)
    if _KINDS[weak_kind] <= _KINDS[sk]:
        return strong
    if weak_kind == "int":
        return default_int()
    if weak_kind == "float":
        return default_float()
    # weak complex
    if sk == "float":
        return _COMPLEX_FOR_FLOAT[_width(strong)]
    return default_complex()


def result_type(*values: Any) -> tuple[PT, bool]:
    """The promoted element type of ``values`` and whether it is weak."""
    avals = [v if isinstance(v, AbstractValue) else abstractify(v) for v in values]
    strong = [a.element_type for a in avals if not a.weak_type]
    weak = [a.element_type for a in avals if a.weak_type]
    if strong:
        out = strong[0]
        for t in strong[1:]:
            out = _join_strong(out, t)
        for t in weak:
            out = _join_weak(out, kind_of(t))
        return out, False
    out = weak[0]
    for t in weak[1:]:
        out = _join_strong(out, t)
    return out, True


def canonical_type(dtype: Any) -> PT:
    """A ``PrimitiveType`` from a dtype-like (``np.float32``, ``'f32'``, a
    PrimitiveType); a NumPy 64-bit dtype is narrowed unless ``jax_enable_x64``
    (as JAX's requested dtypes are), an XLA type name or PrimitiveType is exact."""
    if isinstance(dtype, PT):
        return dtype
    own = getattr(dtype, "_numxla_type", None)  # numxla.numpy's scalar types (bfloat16...)
    if own is not None:
        return canonicalize_type(own)
    if isinstance(dtype, str):
        try:
            return PT.from_name(dtype)
        except ValueError:
            pass
    return canonicalize_type(PT.from_dtype(np.dtype(dtype)))


def types_of(values: Sequence[Any]) -> list[PT]:
    return [abstractify(v).element_type for v in values]
