"""Rules for primitives/shape_ops.py (being written)."""
