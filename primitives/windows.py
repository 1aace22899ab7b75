"""Windowed reductions: ReduceWindow (variadic, base/window dilation, padding) and SelectAndScatter."""
from __future__ import annotations

__all__: list[str] = []
