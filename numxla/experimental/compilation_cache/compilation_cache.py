"""``jax.experimental.compilation_cache.compilation_cache``: JAX's persistent
cache switches.  numxla always caches its compiled kernels on disk (in
``NUMXLA_CACHE_DIR``, set before the first compile), so these record the
directory a program asks for and change nothing."""
from __future__ import annotations

from typing import Any

__all__ = ["set_cache_dir", "initialize_cache", "is_initialized", "reset_cache"]

_state: dict[str, Any] = {"dir": None}


def set_cache_dir(path: Any) -> None:
    _state["dir"] = str(path)


initialize_cache = set_cache_dir


def is_initialized() -> bool:
    return _state["dir"] is not None


def reset_cache() -> None:
    _state["dir"] = None
