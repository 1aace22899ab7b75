"""``jax.errors``: the exception types JAX programs catch, as numxla's own
(each of the conversion errors a traced value used where Python needs a
concrete one raises is a ``tracer.core.ConcretizationError``)."""
from __future__ import annotations

from numxla.tracer.core import (ConcretizationTypeError, LeakedTracerError,
                                NonConcreteBooleanIndexError, TracerArrayConversionError,
                                TracerBoolConversionError, TracerError,
                                TracerIntegerConversionError)

__all__ = ["ConcretizationTypeError", "TracerArrayConversionError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "UnexpectedTracerError", "NonConcreteBooleanIndexError",
           "KeyReuseError", "JaxRuntimeError"]

UnexpectedTracerError = LeakedTracerError


class KeyReuseError(TracerError):
    """JAX's key-reuse checker's error (numxla does not check key reuse)."""


class JaxRuntimeError(RuntimeError):
    """An error raised while a compiled program ran."""
