"""Eager calls of ``numxla.random``'s functions through cached ``jit``s.

A sampler called eagerly runs dozens to hundreds of small ops (threefry's
rounds, XLA's ``log``/``erf_inv`` polynomials), each one an eager op of its
own: ~10-100 ms a call.  A training loop that calls ``random.split`` every
step pays that every step.  So once a function has been called eagerly twice
with the same signature (its static arguments, and the shapes and types of
the others), later calls go through ``jit`` of the function, cached per
function: ~0.1 ms a call once compiled (before that, ``jit``'s tier 0
serves them).  One-off calls stay eager and compile nothing.

Static (part of the signature): shapes, dtypes, flags, strings, ``None``,
Python ints (``num``, ``axis``, ``permutation``'s ``x``...), except
``fold_in``'s ``data``, which is traced (a loop index must not recompile).
Traced: arrays, typed keys and Python floats (weakly typed, as under ``jit``).  A
function that cannot be traced with those arguments stays eager for that
signature.  Only in ``jit``'s default tiered mode (``NUMXLA_TIERED``): when
calls wait for compiled code (the test suite), eager calls stay eager.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from numxla.tracer.core import EvalInterpreter, Tracer, abstractify, current_interpreter

from ._random_keys import KeyArray

__all__ = ["eager_jit"]

HOT_CALLS = 2           # eager calls of one signature before it goes through jit
_TRACED_INTS = {"data"}  # Python ints traced rather than static, by parameter name


def _is_dynamic(name: str, value: Any) -> bool:
    if isinstance(value, KeyArray):
        return True
    if isinstance(value, bool) or value is None or isinstance(value, (str, tuple, list, type)):
        return False
    if isinstance(value, int):
        return name in _TRACED_INTS
    if isinstance(value, (float, complex)):
        return True
    return hasattr(value, "__numxla_aval__") or isinstance(value, (np.ndarray, np.generic))


def _traced_key(value: Any) -> Any:
    """The type signature of a traced argument."""
    if isinstance(value, KeyArray):
        return (KeyArray, abstractify(value._data))
    return abstractify(value)


def _static_key(value: Any) -> Any:
    """A hashable stand-in for a static argument's value."""
    if isinstance(value, list):
        return ("list", tuple(_static_key(v) for v in value))
    if isinstance(value, tuple):
        return tuple(_static_key(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return ("id", id(value))
    return (type(value), value)


def eager_jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, its hot eager signatures run by a cached ``jit`` of it."""
    signature = inspect.signature(fn)
    calls: dict[Any, int] = {}
    jitted: dict[tuple[str, ...], Callable[..., Any]] = {}
    untraceable: set[Any] = set()

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if not isinstance(current_interpreter(), EvalInterpreter) or any(
                isinstance(a, Tracer) for a in (*args, *kwargs.values())):
            return fn(*args, **kwargs)
        from numxla.compile.tiers import tier_mode
        if tier_mode() != "tiered":
            return fn(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)
        params = bound.arguments
        static = tuple(n for n, v in params.items() if not _is_dynamic(n, v))
        key = (static, tuple((n, _static_key(v)) if n in static else (n, _traced_key(v))
                             for n, v in params.items()))
        count = calls.get(key, 0) + 1
        calls[key] = count
        if count < HOT_CALLS or key in untraceable:
            return fn(*args, **kwargs)
        compiled = jitted.get(static)
        if compiled is None:
            from numxla.compile import jit
            compiled = jitted[static] = jit(fn, static_argnames=static)
        call = {n: (np.uint32(v % 2 ** 32) if n in _TRACED_INTS and isinstance(v, int) else v)
                for n, v in params.items()}
        try:
            return compiled(**call)
        except Exception:  # e.g. Python logic on a traced float: stay eager for this signature
            untraceable.add(key)
            return fn(*args, **kwargs)

    wrapper.__wrapped__ = fn
    return wrapper
