"""``jax.errors``: the exception types JAX programs catch, as numxla's own
(a ``ConcretizationTypeError`` is what numxla raises for a traced value used
where Python needs a concrete one)."""
from __future__ import annotations

from numxla.tracer.core import ConcretizationError, LeakedTracerError, TracerError

__all__ = ["ConcretizationTypeError", "TracerArrayConversionError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "UnexpectedTracerError", "NonConcreteBooleanIndexError",
           "KeyReuseError", "JaxRuntimeError"]

ConcretizationTypeError = ConcretizationError
TracerArrayConversionError = ConcretizationError
TracerBoolConversionError = ConcretizationError
TracerIntegerConversionError = ConcretizationError
NonConcreteBooleanIndexError = ConcretizationError
UnexpectedTracerError = LeakedTracerError


class KeyReuseError(TracerError):
    """JAX's key-reuse checker's error (numxla does not check key reuse)."""


class JaxRuntimeError(RuntimeError):
    """An error raised while a compiled program ran."""
