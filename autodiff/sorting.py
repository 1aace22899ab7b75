"""Rules for primitives/sorting.py (being written)."""
