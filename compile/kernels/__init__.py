"""Numba lowering rules, one module per op family; importing this package
registers them all in :data:`compile.codegen.lowerings`."""
from . import elementwise, shape_ops, reductions, dot_conv  # noqa: F401
