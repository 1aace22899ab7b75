"""Rules for primitives/dot_conv.py (being written)."""
