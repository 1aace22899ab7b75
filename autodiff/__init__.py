"""numxla's transforms, JAX-style: ``jvp``, ``vjp``, ``grad``,
``value_and_grad``, ``jacfwd``, ``jacrev``, ``vmap`` and ``check_grads``.

Each transform is an interpreter (``forward.JVPInterpreter``,
``reverse.ReverseInterpreter``, ``batching.BatchInterpreter``) that runs the
function on its parent interpreter, so transforms compose with each other
and with ``compile.jit`` in any order.  Rules live in tables keyed by
primitive (``autodiff.rules``), registered per op family in the modules
named after ``primitives/``'s.  Reverse-mode rules use XLA's own ops: the
VJP of ``batch_norm_training`` is ``batch_norm_grad``, of a max
``reduce_window`` ``select_and_scatter``.
"""
from . import rules  # noqa: F401
from .batching import vmap
from .check import check_grads
from .forward import jvp
from .jacobians import jacfwd, jacrev
from .reverse import grad, value_and_grad, vjp
from .rules import float0

# The per-family rule modules register themselves on import.
from . import (batch_norm, control_flow, dot_conv, effects, elementwise, fft_linalg,  # noqa: F401,E402
               indexing, reductions, shape_ops, sorting, windows)

__all__ = ["jvp", "vjp", "grad", "value_and_grad", "jacfwd", "jacrev", "vmap", "check_grads",
           "float0"]
