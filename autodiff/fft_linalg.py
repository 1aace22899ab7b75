"""Rules for primitives/fft_linalg.py (being written)."""
