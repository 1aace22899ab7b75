"""NumPy-style layer: linalg functions (filled in by the op-set work)."""
from __future__ import annotations

__all__: list[str] = []
