"""Rules for primitives/control_flow.py (being written)."""
