"""Rules for primitives/batch_norm.py (being written)."""
