"""XLA's op set, ``jax.lax``-style: ``import primitives as lax``.

Each op family is one module defining, side by side, the ``Primitive``, its
shape rule (XLA's error conditions, raised at trace time), its reference
semantics in NumPy (what an eager call runs, and the oracle the compiled
backend is tested against) and the user-facing function.
``primitives.numpy`` is the NumPy-style layer.
"""
from numxla.tracer.core import PRIMITIVES

from .elementwise import *  # noqa: F401,F403
from .shape_ops import *  # noqa: F401,F403
from .reductions import *  # noqa: F401,F403
from .windows import *  # noqa: F401,F403
from .sorting import *  # noqa: F401,F403
from .dot_conv import *  # noqa: F401,F403
from .fft_linalg import *  # noqa: F401,F403
from .batch_norm import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .control_flow import *  # noqa: F401,F403
from .side_effects import *  # noqa: F401,F403
from .rng import *  # noqa: F401,F403
from .collectives import *  # noqa: F401,F403
from .special import *  # noqa: F401,F403
from .prefix_scan import *  # noqa: F401,F403
from .composites import *  # noqa: F401,F403
from .conv_shapes import *  # noqa: F401,F403
from . import numpy  # noqa: F401  (defines the operators of traced values)
from . import (batch_norm, collectives, composites, control_flow, conv_shapes, dot_conv, elementwise,
               fft_linalg,
               indexing, prefix_scan, reductions, rng, shape_ops, side_effects, sorting, special,
               windows)

_FAMILIES = (elementwise, shape_ops, reductions, windows, sorting, dot_conv, fft_linalg,
             batch_norm, indexing, control_flow, side_effects, rng, collectives, special,
             prefix_scan, composites, conv_shapes)

# solvers with implicit derivatives (written on autodiff's custom_jvp/custom_vjp)
from numxla.autodiff.implicit import custom_linear_solve, custom_root  # noqa: E402


def list_primitives() -> list[str]:
    """The names of every registered primitive, sorted."""
    return sorted(PRIMITIVES)


__all__ = [name for family in _FAMILIES for name in family.__all__] + [
    "list_primitives", "numpy", "custom_root", "custom_linear_solve"]
