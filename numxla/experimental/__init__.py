"""``jax.experimental``: ``enable_x64``/``disable_x64`` (context managers
switching ``jax_enable_x64``), ``ode`` (``odeint``), ``checkify``, ``jet``
and ``io_callback``; ``shard_map``, ``mesh_utils`` and ``compilation_cache``
are submodules."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from numxla.tracer.config import config

from numxla._api import io_callback

from . import checkify, jet, ode

__all__ = ["enable_x64", "disable_x64", "ode", "checkify", "jet", "io_callback"]


@contextlib.contextmanager
def enable_x64(new_val: bool = True) -> Iterator[None]:
    """64-bit types on (or ``new_val``) while the block runs."""
    saved = config.jax_enable_x64
    config.update("jax_enable_x64", new_val)
    try:
        yield
    finally:
        config.update("jax_enable_x64", saved)


def disable_x64() -> Any:
    return enable_x64(False)
