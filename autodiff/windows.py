"""Rules for primitives/windows.py (being written)."""
