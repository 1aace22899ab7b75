"""The suite tests compiled kernels: ``jit`` waits for the compiled program,
and every call of it is checked against tier 0, the reference semantics
(``NUMXLA_TIERED=check``: the same types, shapes, layouts and values, or a
``TierMismatch``), unless a test asks for tiers itself (``jit(f, tiered=True)``,
tests/compile/test_tiers.py)."""
import os

os.environ.setdefault("NUMXLA_TIERED", "check")
# Compile workers are children of the test process, not compile servers
# (which outlive it): tests/compile/test_compile_server.py starts its own.
os.environ.setdefault("NUMXLA_COMPILE_SERVER", "0")
