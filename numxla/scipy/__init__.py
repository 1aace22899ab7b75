"""``jax.scipy`` for numxla: ``special``, ``stats``, ``linalg``, ``signal``, ``integrate``,
``optimize`` (``minimize`` by BFGS), ``sparse`` (``sparse.linalg``'s Krylov solvers),
``ndimage``, ``fft`` (cosine transforms), ``interpolate``, ``cluster`` (``vq``) and
``spatial`` (``transform``'s rotations) (loaded on first use)."""
from __future__ import annotations

import importlib
from typing import Any

_SUBMODULES = ("special", "stats", "linalg", "signal", "integrate", "optimize", "sparse",
               "ndimage", "fft", "interpolate", "cluster", "spatial")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'numxla.scipy' has no attribute {name!r}")


__all__ = list(_SUBMODULES)
