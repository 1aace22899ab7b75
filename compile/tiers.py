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
import os
import threading
import time
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer.core import (AbstractValue, BF16Array, DynamicArray, EvalInterpreter,
                         set_interpreter)
from numxla.tracer.graph import Graph, eval_graph
from numxla.tracer.shapes import PrimitiveType, Shape

from .runtime import Array, to_buffer

__all__ = ["TieredProgram", "evaluate_reference", "compile_in_background", "TierWarning", "log",
           "log_level", "tier_mode", "TierMismatch", "check_against_tier_0"]

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
        from numxla.primitives.side_effects import TupleValue
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
    results = [_result_value(v, s) for v, s in zip(outs, out_shapes)]
    # results are the caller's, as the compiled program's are: never a view
    # of an argument (an identity, a reshape, a slice is a view in NumPy)
    inputs = [a for a in args if isinstance(a, np.ndarray)]
    for i, r in enumerate(results):
        if isinstance(r, Array) and any(np.may_share_memory(r.buffer, a) for a in inputs):
            results[i] = Array.wrap(r.buffer.copy(), r.xla_shape)
    return results


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
        self._lock = threading.Lock()
        self._background: Callable[[], None] | None = None  # starts the compile

    def call_flat(self, leaves: Sequence[Any]) -> list[Any]:
        compiled = self.compiled
        if compiled is not None:
            return compiled.call_flat(leaves)
        if not self._served_tier0:
            self._served_tier0 = True
            log.log(log_level(), "%s: served by tier 0 (reference semantics) while %s", self.name,
                    "its compiled program builds" if self.state == "compiling" else
                    f"it has no compiled program ({self.failure})")
        try:
            return evaluate_reference(self.graph, self.out_shapes, leaves)
        finally:
            if self._background is not None:
                self._start_background()

    def _start_background(self) -> None:
        """Start the compile once the first result is out: code generation
        on another thread would otherwise share the GIL with it."""
        with self._lock:
            start, self._background = self._background, None
        if start is not None:
            start()

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
    return logging.WARNING if os.environ.get("NUMXLA_LOG_COMPILES", "") not in ("", "0") \
        else logging.DEBUG


def compile_in_background(build: Callable[[], Any], program: TieredProgram,
                          on_ready: Callable[[Any], None]) -> None:
    """On a background thread, started by ``program``'s first call once its
    result is out: ``build()`` the compiled program (code
    generation), load what the disk cache holds of its kernels, have the
    missing ones compiled by worker processes (handed over through the disk
    cache; on this thread when there is no usable disk cache), then switch
    ``program`` to it.  On any failure ``program`` stays on tier 0."""
    from .background import service
    from .cache import disk_cache_usable

    def fail(error: BaseException) -> None:
        program.fail(str(error) if type(error).__name__ == "BackgroundCompileError"
                     else f"{type(error).__name__}: {error}")

    def finish(compiled: Any, how: str, start: float) -> None:
        try:
            built = [call.has_code(built=True) for call in compiled.kernel_calls()]
            if not all(built):  # (loads what the workers wrote)
                raise RuntimeError("the compiled code could not be loaded from the disk cache")
        except Exception as error:  # noqa: BLE001 - reported, never raised into a call
            fail(error)
            return
        log.log(log_level(), "%s: %s in %.2f s", program.name, how, time.perf_counter() - start)
        program.finish(compiled, on_ready)

    def submit(compiled: Any, missing: list, start: float) -> None:
        remaining = [len(missing)]
        lock = threading.Lock()

        def done(future) -> None:
            error = future.exception()
            with lock:
                if remaining[0] <= 0:
                    return  # failed already
                remaining[0] = -1 if error is not None else remaining[0] - 1
                last = remaining[0] == 0
            if error is not None:
                fail(error)
            elif last:
                finish(compiled, f"{len(missing)} kernels compiled by worker processes", start)

        for call in missing:
            future = service().submit(call.kernel.path, call.kernel.function, call.types)
            future.add_done_callback(done)

    def run() -> None:
        start = time.perf_counter()
        try:
            compiled = build()
            missing = compiled.missing_code()
            if missing and not disk_cache_usable():  # no disk cache to hand code over through
                compiled.compile_now()
                missing = []
        except Exception as error:  # noqa: BLE001 - reported, never raised into a call
            fail(error)
            return
        if missing:
            submit(compiled, missing, start)
        else:
            finish(compiled, "compiled code loaded", start)

    program._background = threading.Thread(target=run, daemon=True, name="numxla-compile").start


# -- checking the tiers against each other ----------------------------------------------

CHECKED_CALLS = 8


def tier_mode() -> str:
    """``NUMXLA_TIERED``: ``"tiered"`` (the default), ``"compiled"`` (``0``: wait
    for the compiled program), ``"check"``: wait for it, and check the
    results of each program's first ``CHECKED_CALLS`` calls against tier 0's
    (:class:`TierMismatch`; a training loop's later steps run the same
    kernels on new values, and checking them all multiplies a test's time), or
    ``"reference"``: tier 0 only, nothing compiled (to debug a program, or
    test what it computes without paying for Numba)."""
    value = os.environ.get("NUMXLA_TIERED", "1").strip().lower()
    if value in ("check", "reference"):
        return value
    return "compiled" if value in ("0", "false", "no", "off") else "tiered"


class TierMismatch(AssertionError):
    """The compiled program and tier 0 disagree on a call's results."""


def check_against_tier_0(name: str, graph: Graph, out_shapes: Sequence[Shape],
                         leaves: Sequence[Any], results: Sequence[Any]) -> None:
    """Raise :class:`TierMismatch` unless ``results`` (the compiled program's)
    are what tier 0 gives: the same types, shapes, layouts and run-time
    sizes, integers and booleans equal, floats equal in NaN and infinity
    and close elsewhere (within 1%, or 1% of the result's largest magnitude:
    tier 0 is the reference semantics, which the compiled kernels meet to
    their own tolerances; what this catches is a value in the wrong place)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            want = evaluate_reference(graph, out_shapes, leaves)
    for i, (got, ref) in enumerate(zip(results, want)):
        problem = _mismatch(got, ref)
        if problem:
            raise TierMismatch(f"{name}: result {i} ({out_shapes[i]}): the compiled program "
                               f"and tier 0 differ: {problem}")


def _mismatch(got: Any, want: Any) -> str | None:
    if type(got) is not type(want):
        return f"{type(got).__name__} against {type(want).__name__}"
    if isinstance(got, tuple):
        return next((p for p in map(_mismatch, got, want) if p), None)
    if isinstance(got, Array):
        if got.xla_shape != want.xla_shape or got.buffer.dtype != want.buffer.dtype:
            return f"{got.xla_shape} ({got.buffer.dtype}) against {want.xla_shape}"
    if not isinstance(got, np.ndarray) and not isinstance(got, Array):
        return None  # a token
    if getattr(got, "dynamic_sizes", None) != getattr(want, "dynamic_sizes", None):
        return f"run-time sizes {got.dynamic_sizes} against {want.dynamic_sizes}"
    a, b = np.asarray(got), np.asarray(want)
    if isinstance(got, Array) and got.xla_shape.element_type is PrimitiveType.BF16:
        from numxla.tracer.shapes import bf16_to_f32
        a, b = bf16_to_f32(a), bf16_to_f32(b)
    if a.dtype.kind not in "fc":
        return None if np.array_equal(a, b) else "values differ"
    for part in ((a, b),) if a.dtype.kind == "f" else ((a.real, b.real), (a.imag, b.imag)):
        x, y = (p.astype(np.float64) for p in part)
        if not np.array_equal(np.isnan(x), np.isnan(y)):
            return "NaN in other places"
        if not np.array_equal(x[np.isinf(y)], y[np.isinf(y)]):
            return "infinities differ"
        finite = np.isfinite(y) & np.isfinite(x)
        scale = np.max(np.abs(y[finite]), initial=0.0)
        # relative to the result's magnitude, with a floor for results that are
        # rounding noise (a residual A - L L^T is 1e-9 or 1e-10 either way)
        noise = float(np.sqrt(np.finfo(part[1].dtype).eps))
        tolerance = 1e-2 * np.maximum(np.abs(y[finite]), scale) + noise
        if np.any(np.abs(x[finite] - y[finite]) > tolerance):
            return f"values differ by up to {np.max(np.abs(x[finite] - y[finite])):.3g}"
    return None
