"""Rules for primitives/effects.py (being written)."""
