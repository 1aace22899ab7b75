"""Global settings, as JAX's ``jax.config``: ``config.update(name, value)``.

``jax_enable_x64`` (env ``NUMXLA_ENABLE_X64=1``): whether 64-bit element
types exist for the values users pass in.  Off by default, as in JAX: a
float64 NumPy array, Python list or dtype request becomes f32 (int64 s32,
uint64 u32, complex128 c64), so a JAX program runs in the types it runs in
under JAX.  The XLA op set itself has every type; values already typed
(graph values, ``Array``s, ``Shape``s) keep theirs.
"""
from __future__ import annotations

import os

from .shapes import PrimitiveType as PT

__all__ = ["config", "canonicalize_type"]

_NARROWER = {PT.F64: PT.F32, PT.S64: PT.S32, PT.U64: PT.U32, PT.C128: PT.C64}


class Config:
    """The settings; read them as attributes (``config.jax_enable_x64``)."""

    def __init__(self) -> None:
        self.jax_enable_x64 = os.environ.get("NUMXLA_ENABLE_X64", "0").lower() not in (
            "0", "", "false", "no")
        # raise FloatingPointError when an op (eager) or a jit result gives NaN / inf
        self.jax_debug_nans = False
        self.jax_debug_infs = False

    def update(self, name: str, value: object) -> None:
        """Set ``name`` (JAX's spelling, with or without the ``jax_`` prefix).
        ``jax_enable_x64``, ``jax_disable_jit``, ``jax_debug_nans`` and
        ``jax_debug_infs`` act; JAX's other settings (``jax_platform_name``...)
        are kept, so programs that set them run, but change nothing."""
        key = name if name.startswith("jax_") else f"jax_{name}"
        if key == "jax_enable_x64":
            self.jax_enable_x64 = bool(value)
        elif key == "jax_disable_jit":
            import importlib
            importlib.import_module("numxla.compile.jit")._DISABLED = bool(value)
            setattr(self, key, bool(value))
        else:
            setattr(self, key, value)

    def read(self, name: str) -> object:
        return getattr(self, name if name.startswith("jax_") else f"jax_{name}")

    def __getattr__(self, name: str) -> object:
        # JAX's settings that were never set read as their defaults (False / None)
        if name.startswith("jax_"):
            return False if name.startswith(("jax_debug", "jax_disable", "jax_enable")) else None
        raise AttributeError(f"numxla.config has no attribute {name!r}")

    @property
    def x64_enabled(self) -> bool:
        return self.jax_enable_x64


config = Config()


def canonicalize_type(t: PT) -> PT:
    """``t`` as an input value of that type gets: 64-bit types narrowed unless
    ``jax_enable_x64`` is on."""
    return t if config.jax_enable_x64 else _NARROWER.get(t, t)
