"""The suite tests compiled kernels: ``jit`` waits for the compiled program
(``NUMXLA_TIERED=0``) unless a test asks for tiers (``jit(f, tiered=True)``,
tests/compile/test_tiers.py)."""
import os

os.environ.setdefault("NUMXLA_TIERED", "0")
