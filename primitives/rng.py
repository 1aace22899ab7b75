"""Random numbers: RngUniform, RngNormal, RngBitGenerator (THREE_FRY and PHILOX, XLA's exact bits)."""
from __future__ import annotations

__all__: list[str] = []
