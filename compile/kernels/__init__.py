"""Numba lowering rules, one module per op family; importing this package
registers them all in :data:`compile.codegen.lowerings` (and the scalar
forms of element-wise ops in :data:`compile.codegen.scalar_exprs`)."""
from . import (batch_norm, collectives, control_flow, dot_conv, elementwise, fft_linalg,  # noqa: F401
               indexing, reductions, rng, shape_ops, side_effects, sorting, windows)
