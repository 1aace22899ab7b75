"""Lowering rules, one module per op family: how each primitive is written
as generated code (the emitters).  Importing this package registers them
all in :mod:`compile.registry` (``lowerings``, ``scalar_exprs``, the fusion
and layout rules...).  The ``@njit`` kernels the generated code calls live
in :mod:`compile.kernels`."""
from . import (batch_norm, collectives, control_flow, dot_conv, dynamic,  # noqa: F401
               elementwise, fft_linalg, indexing, reductions, rng, shape_ops, side_effects,
               sorting, windows)
