"""Sort (multi-operand, comparator, stability) and TopK."""
from __future__ import annotations

__all__: list[str] = []
