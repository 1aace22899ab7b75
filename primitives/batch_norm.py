"""Batch normalisation: BatchNormTraining, BatchNormInference, BatchNormGrad."""
from __future__ import annotations

__all__: list[str] = []
