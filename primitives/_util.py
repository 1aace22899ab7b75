"""Small helpers shared by the op families: argument checking and coercion."""
from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

from numxla.tracer.core import AbstractValue, ShapeError, Tracer, abstractify
from numxla.tracer.shapes import PrimitiveType as PT

__all__ = ["as_int_tuple", "check_kinds", "canonical_dims", "is_value", "aval_of"]


def as_int_tuple(op: str, name: str, value: Any) -> tuple[int, ...]:
    """A parameter given as a sequence of ints, as a hashable tuple."""
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    try:
        return tuple(int(v) for v in value)
    except TypeError:
        raise ShapeError(op, f"{name} must be a sequence of ints, got {value!r}") from None


def check_kinds(op: str, aval: AbstractValue, allowed: Iterable[str], what: str = "operand") -> None:
    """Raise unless ``aval``'s element type is of an allowed kind.

    Kinds: ``pred``, ``signed``, ``unsigned``, ``float``, ``complex``.
    """
    t = aval.element_type
    kind = ("pred" if t is PT.PRED else "complex" if t.is_complex else
            "float" if t.is_floating else "signed" if t.is_signed else
            "unsigned" if t.is_unsigned else "other")
    allowed = tuple(allowed)
    if kind not in allowed:
        raise ShapeError(op, f"{what} element type {t.short_name} is not allowed "
                             f"(expected {' or '.join(allowed)})", aval)


def canonical_dims(op: str, name: str, dims: Sequence[int], rank: int, *operands: AbstractValue
                   ) -> tuple[int, ...]:
    """Dimension numbers with Python-style negatives resolved, range-checked."""
    out = []
    for d in dims:
        if not -rank <= d < rank:
            raise ShapeError(op, f"{name} {d} is out of range for rank {rank}", *operands)
        out.append(d % rank if rank else d)
    return tuple(out)


def is_value(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, int, float, complex, bool)) or \
        hasattr(x, "__numxla_aval__")


def aval_of(x: Any) -> AbstractValue:
    return abstractify(x)


def dims(x: Any) -> tuple[int, ...]:
    """The dimensions of a value (array, tracer, scalar)."""
    return abstractify(x).dimensions


def element_type(x: Any) -> PT:
    """The element type of a value (array, tracer, scalar)."""
    return abstractify(x).element_type
