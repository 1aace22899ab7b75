"""Tiered execution: a signature's first calls never wait for Numba.

Tier 0 evaluates the traced graph with the primitives' reference semantics
(NumPy, eagerly) and returns what the compiled code would: ``Array`` s in
the layouts of the compiled program's results (``out_layouts``), tokens,
tuples, ``DynamicArray`` s.  Meanwhile the compiled program (tier 1) builds
in the background (:mod:`compile.background`); when it is ready, the
signature's entries in the jitted function's caches are replaced by it, so
later calls cost what a compiled call costs.  If the background compile
fails, the signature stays on tier 0 and one warning says why.
"""
from __future__ import annotations

import logging
import threading
import time
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from tracer.core import (AbstractValue, BF16Array, DynamicArray, EvalInterpreter,
                         set_interpreter)
from tracer.graph import Graph, eval_graph
from tracer.shapes import PrimitiveType, Shape

from .runtime import Array, to_buffer

__all__ = ["TieredProgram", "evaluate_reference", "compile_in_background", "TierWarning", "log",
           "log_level"]

log = logging.getLogger("numxla.compile")


class TierWarning(RuntimeWarning):
    """A jitted function stays on tier 0 (reference semantics): its compiled
    program could not be built."""


def _eager_value(x: Any, aval: AbstractValue) -> Any:
    """A call's argument as the eager interpreter takes it (the logical value)."""
    if isinstance(x, Array):
        x = np.asarray(x)
        if aval.element_type is PrimitiveType.BF16:
            x = x.view(BF16Array)
    return x


def _result_value(value: Any, shape: Shape) -> Any:
    """An eager result as the compiled program returns it: an ``Array`` in
    ``shape``'s layout; a ``DynamicArray`` whose run-time sizes are below its
    bounds as it is; tokens and tuples element by element."""
    if shape.is_token:
        return value
    if shape.is_tuple:
        from primitives.side_effects import TupleValue
        return TupleValue(_result_value(v, s) for v, s in zip(value, shape.tuple_shapes))
    if isinstance(value, DynamicArray) and value.dynamic_sizes is not None and any(
            n < bound for n, bound in zip(value.dynamic_sizes, shape.dimensions)):
        return value
    buffer = to_buffer(np.asarray(value), AbstractValue(shape))
    return Array.wrap(buffer, shape)


def evaluate_reference(graph: Graph, out_shapes: Sequence[Shape], leaves: Sequence[Any]
                       ) -> list[Any]:
    """Tier 0: ``graph`` on ``leaves`` through the reference semantics, the
    results as the compiled program of ``out_shapes`` gives them."""
    args = [_eager_value(x, av) for x, av in zip(leaves, graph.in_avals)]
    with set_interpreter(EvalInterpreter()):
        outs = eval_graph(graph, *args)
    return [_result_value(v, s) for v, s in zip(outs, out_shapes)]


class TieredProgram:
    """One signature of a jitted function: tier 0 until ``compiled`` is set.

    ``on_ready(compiled)`` is called once the compiled program is loaded
    (the jitted function then puts it in place of this object)."""

    def __init__(self, graph: Graph, out_shapes: Sequence[Shape], name: str):
        self.graph = graph
        self.out_shapes = tuple(out_shapes)
        self.name = name
        self.compiled: Any = None
        self.state = "compiling"      # -> "compiled" or "failed"
        self.failure: str | None = None
        self.started = time.perf_counter()
        self._served_tier0 = False
        self._done = threading.Event()

    def call_flat(self, leaves: Sequence[Any]) -> list[Any]:
        compiled = self.compiled
        if compiled is not None:
            return compiled.call_flat(leaves)
        if not self._served_tier0:
            self._served_tier0 = True
            log.log(log_level(), "%s: served by tier 0 (reference semantics) while %s", self.name,
                    "its compiled program builds" if self.state == "compiling" else
                    f"it has no compiled program ({self.failure})")
        return evaluate_reference(self.graph, self.out_shapes, leaves)

    def finish(self, compiled: Any, on_ready: Callable[[Any], None]) -> None:
        """The compiled program is ready: later calls use it."""
        self.compiled = compiled
        self.state = "compiled"
        on_ready(compiled)
        log.log(log_level(), "%s: switched to compiled code %.2f s after its first call",
                self.name, time.perf_counter() - self.started)
        self._done.set()

    def fail(self, reason: str) -> None:
        """No compiled program: stay on tier 0 and say why, once."""
        self.failure = reason
        self.state = "failed"
        warnings.warn(f"{self.name}: the compiled program could not be built, so calls keep "
                      f"running on tier 0 (the reference semantics, correct but slower): "
                      f"{reason}", TierWarning, stacklevel=2)
        self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the background compile has ended (compiled or failed)."""
        return self._done.wait(timeout)


def log_level() -> int:
    """WARNING when ``NUMXLA_LOG_COMPILES=1`` (shown by default), DEBUG otherwise."""
    import os
    return logging.WARNING if os.environ.get("NUMXLA_LOG_COMPILES", "") not in ("", "0") \
        else logging.DEBUG


def compile_in_background(compiled: Any, program: TieredProgram,
                          on_ready: Callable[[Any], None]) -> None:
    """Build ``compiled``'s machine code off this thread — in the compile
    worker process, handed over through the disk cache (on a thread of this
    process when there is no usable disk cache) — then switch ``program`` to
    it; on any failure ``program`` stays on tier 0."""
    from .background import service

    def done(future) -> None:
        try:
            seconds = future.result()
            if not compiled.has_code():  # loads what the worker wrote
                raise RuntimeError("the compiled code could not be loaded from the disk cache")
        except Exception as error:  # noqa: BLE001 - reported, never raised into a call
            program.fail(str(error) if type(error).__name__ == "BackgroundCompileError"
                         else f"{type(error).__name__}: {error}")
            return
        log.log(log_level(), "%s: compiled in the background in %.2f s", program.name, seconds)
        program.finish(compiled, on_ready)

    def submit() -> None:  # starting the worker process costs ~10 ms: not in this call
        service().submit(compiled.module_path, "graph_fn",
                         compiled.argument_types()).add_done_callback(done)

    def compile_here() -> None:  # no disk cache to hand code over through
        try:
            start = time.perf_counter()
            compiled.compile_now()
        except Exception as error:  # noqa: BLE001 - reported, never raised into a call
            program.fail(f"{type(error).__name__}: {error}")
            return
        log.log(log_level(), "%s: compiled on a background thread in %.2f s", program.name,
                time.perf_counter() - start)
        program.finish(compiled, on_ready)

    from .cache import disk_cache_usable
    target = submit if disk_cache_usable() else compile_here
    threading.Thread(target=target, daemon=True, name="numxla-compile").start()
