"""Control flow: While, Conditional (cond/switch), Call, Map; fori_loop and scan built on them."""
from __future__ import annotations

__all__: list[str] = []
