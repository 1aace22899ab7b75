"""Gather and Scatter with full dimension numbers (including batching dimensions)."""
from __future__ import annotations

__all__: list[str] = []
