"""Tokens and side effects: AfterAll, Infeed/Outfeed, Send/Recv, CustomCall, CompositeCall, OptimizationBarrier, Tuple/GetTupleElement."""
from __future__ import annotations

__all__: list[str] = []
