"""XLA's op set, ``jax.lax``-style: ``import primitives as lax``.

Each op family is one module defining, side by side, the ``Primitive``, its
shape rule (XLA's error conditions, raised at trace time), its reference
semantics in NumPy (what an eager call runs, and the oracle the compiled
backend is tested against) and the user-facing function.
``primitives.numpy`` is the NumPy-style layer.
"""
from tracer.core import PRIMITIVES

from .elementwise import (add, compare, convert_element_type, div, eq, exp, ge, gt, le, log,
                          lt, max, min, mul, ne, neg, select, sub, tanh)
from .shape_ops import broadcast_in_dim, reshape, transpose
from .reductions import reduce_sum
from .dot_conv import dot, dot_general
from . import numpy  # noqa: F401  (defines the operators of traced values)


def list_primitives() -> list[str]:
    """The names of every registered primitive, sorted."""
    return sorted(PRIMITIVES)


__all__ = [
    "add", "compare", "convert_element_type", "div", "eq", "exp", "ge", "gt", "le", "log",
    "lt", "max", "min", "mul", "ne", "neg", "select", "sub", "tanh", "broadcast_in_dim",
    "reshape", "transpose", "reduce_sum", "dot", "dot_general", "list_primitives", "numpy",
]
