"""``jax.profiler``: the tracing and memory-profile entry points, accepted
so programs that profile run.  numxla records no device trace (use
Python's profilers on its NumPy and Numba code); ``trace`` and the
annotations only mark blocks, and memory profiles are empty."""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator

__all__ = ["trace", "start_trace", "stop_trace", "TraceAnnotation", "StepTraceAnnotation",
           "annotate_function", "device_memory_profile", "save_device_memory_profile",
           "start_server", "stop_server"]


@contextlib.contextmanager
def trace(log_dir: Any, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
          **kwargs: Any) -> Iterator[None]:
    """Profile the block (nothing is written)."""
    yield


def start_trace(log_dir: Any, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, **kwargs: Any) -> None:
    """Start a profile (nothing is recorded)."""


def stop_trace() -> None:
    """Stop the profile ``start_trace`` began."""


class TraceAnnotation(contextlib.ContextDecorator):
    """Names a block in a profile: ``with TraceAnnotation("step"):``."""

    def __init__(self, name: str, **kwargs: Any):
        self.name = name

    def __enter__(self) -> "TraceAnnotation":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class StepTraceAnnotation(TraceAnnotation):
    """A training step's block: ``with StepTraceAnnotation("train", step_num=i):``."""


def annotate_function(func: Callable[..., Any] | None = None, name: str | None = None,
                      **kwargs: Any) -> Any:
    """``func``, named in profiles (a decorator, with or without arguments)."""
    if func is None:
        return functools.partial(annotate_function, name=name, **kwargs)
    return func


def device_memory_profile(backend: Any = None) -> bytes:
    """An empty memory profile."""
    return b""


def save_device_memory_profile(filename: Any, backend: Any = None) -> None:
    """Write an empty memory profile to ``filename``."""
    with open(filename, "wb") as f:
        f.write(device_memory_profile(backend))


def start_server(port: int) -> Any:
    """No profiler server runs: accepted, returns None."""
    return None


def stop_server() -> None:
    """Nothing to stop."""
