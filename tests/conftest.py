"""The suite tests compiled kernels: ``jit`` waits for the compiled program,
and its first calls (``compile.tiers.CHECKED_CALLS``) are checked against
tier 0, the reference semantics
(``NUMXLA_TIERED=check``: the same types, shapes, layouts and values, or a
``TierMismatch``), unless a test asks for tiers itself (``jit(f, tiered=True)``,
tests/compile/test_tiers.py)."""
import os

os.environ.setdefault("NUMXLA_TIERED", "check")
# The op set's tests use every element type, f64 and s64 included: 64-bit
# inputs keep their types (JAX's jax_enable_x64); tests of the x64-off
# default switch it themselves.
os.environ.setdefault("NUMXLA_ENABLE_X64", "1")
# Compile workers are children of the test process, not compile servers
# (which outlive it): tests/compile/test_compile_server.py starts its own.
os.environ.setdefault("NUMXLA_COMPILE_SERVER", "0")
