"""Rules for primitives/indexing.py (being written)."""
