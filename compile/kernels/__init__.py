"""Numba lowering rules, one module per op family; importing this package
registers them all in :data:`compile.codegen.lowerings` (and the scalar
forms of element-wise ops in :data:`compile.codegen.scalar_exprs`).  The
helper modules that generated code calls into (``scalar``, ``vecmath``,
``float16``, ``alloc``, ``blas``) are imported here too, with the compiler,
rather than by the first compilation of a process."""
from . import (alloc, batch_norm, blas, collectives, control_flow, dot_conv,  # noqa: F401
               dynamic, elementwise, fft_linalg, float16, indexing, reductions, rng, scalar, shape_ops,
               side_effects, sorting, vecmath, windows)
