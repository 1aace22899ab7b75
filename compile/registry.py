"""Every per-primitive rule table of the backend, in one place.

Each op family's module under ``compile/lowering`` registers its rules
here, keyed by primitive; the passes read them:

* :data:`layout_rules` — layout assignment: the layout of a result given
  its operands' (``compile/layout_assignment.py``);
* :data:`fused_reads`, :data:`fusion_consumers`, :data:`cheap_producers`,
  :data:`rereading_consumers` — loop fusion (``compile/fusion.py``);
* :data:`bitcasts` — clustering: an equation whose result is its operand's
  buffer read another way, so a program runs it without a kernel
  (``compile/clusters.py``);
* :data:`library_rules` — clustering: an equation a program runs by calling
  a pre-compiled library kernel with its geometry at run time, so no code is
  generated or compiled for it (:func:`library_call`);
* :data:`lowerings`, :data:`dynamic_lowerings`, :data:`scalar_exprs` —
  code generation (``compile/generate.py``).

Rules are plain functions taking the lowering context or an equation, so
the tables import nothing of the passes that use them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional, Sequence

from numxla.tracer.core import Primitive

if TYPE_CHECKING:
    from numxla.tracer.graph import Equation
    from numxla.tracer.shapes import Layout, Shape

    from .codegen import LoweringContext

__all__ = ["layout_rules", "fused_reads", "fusion_consumers", "cheap_producers",
           "rereading_consumers", "bitcasts", "lowerings", "dynamic_lowerings", "scalar_exprs",
           "vector_math", "library_rules", "library_call", "LibraryCall", "LibraryCalls", "Buffer",
           "Scratch", "LIBRARY_MAX_ELEMENTS", "elementwise", "Lowering", "ScalarExpr", "FusedRead",
           "LayoutRule"]

# -- layout assignment -------------------------------------------------------------------
LayoutRule = Callable[["Equation", list["Shape"]], Optional["Layout"]]
layout_rules: dict[Primitive, LayoutRule] = {}

# -- fusion ----------------------------------------------------------------------------------
# how to compute one element of a producer's result as source text, given its index
FusedRead = Callable[["LoweringContext", "Equation", Sequence[str]], str]
fused_reads: dict[Primitive, FusedRead] = {}
# ops whose lowering reads operand elements only through ``ctx.read``
fusion_consumers: set[Primitive] = set()
# producers cheap enough to recompute in every consumer (index remapping, simple arithmetic)
cheap_producers: set[Primitive] = set()
# consumers that may read an operand element more than once (overlapping windows)
rereading_consumers: set[Primitive] = set()

# -- clustering ------------------------------------------------------------------------------
# whether an equation's single result is its single operand's buffer as it is
bitcasts: dict[Primitive, Callable[["Equation"], bool]] = {}


class Buffer(NamedTuple):
    """An argument of a library call: the buffer of the equation's operand
    ``index`` (or its result ``index`` when ``result``)."""
    index: int
    result: bool = False


class Scratch(NamedTuple):
    """An argument of a library call: a temporary buffer of ``size`` elements
    of ``dtype`` (a NumPy type name), shared by the calls of one equation
    that name the same ``index`` (one packs an operand, the next reads it)."""
    index: int
    size: int
    dtype: str


class LibraryCall(NamedTuple):
    """How a program runs an equation without generated code: ``function`` (a
    ``cache=True`` Numba function of ``compile/kernels``) called with
    ``arguments``: :class:`Buffer`\\ s, :class:`Scratch` buffers and run-time
    constants (sizes, strides, parameters: ints, floats, int64 arrays)."""
    function: Any
    arguments: tuple

    @classmethod
    def buffers_then(cls, function: Any, eq: "Equation", *constants: Any) -> "LibraryCall":
        """``function(operands..., results..., constants...)``."""
        return cls(function, (*(Buffer(i) for i in range(len(eq.inputs))),
                              *(Buffer(i, True) for i in range(len(eq.outputs))), *constants))


# Library kernels whose loops are generic (batch norms, strided copies) serve
# operands of at most this many elements: there a run takes microseconds and
# the compile it saves (0.1-0.5 s a kernel) is what the user waits for, and
# they measured as fast as generated loops (a small CNN's training step).
# Larger ones get loops specialised to their shape: on the CNN benchmarks (1M
# elements) the batch norm's per-feature passes and the packing copies made the
# forward pass 1.5x and the training step 1.5x slower.
LIBRARY_MAX_ELEMENTS = 1 << 16

# an equation's library call, or None where its operands' types or layouts
# need generated code; an equation with one never has producers fused into it
# (or the calls, in order, when it takes several: packing, then computing)
LibraryCalls = tuple[LibraryCall, ...]
library_rules: dict[Primitive, Callable[["Equation"], Optional[LibraryCall | LibraryCalls]]] = {}


def library_call(eq: "Equation") -> Optional[LibraryCalls]:
    """``eq``'s library calls (:data:`library_rules`), if it has them."""
    rule = library_rules.get(eq.primitive)
    calls = rule(eq) if rule is not None else None
    return (calls,) if isinstance(calls, LibraryCall) else calls


# element-wise ops whose result element ``i`` reads operand elements ``i`` only
# (one loop over the result): clusters of them run flat over their buffers
# (``compile/program.py``), one kernel for every shape
elementwise: set[Primitive] = set()

# -- code generation -------------------------------------------------------------------------
Lowering = Callable[["LoweringContext", "Equation"], None]
lowerings: dict[Primitive, Lowering] = {}
# lowerings for equations with bounded dynamic dimensions (lowering/dynamic.py)
dynamic_lowerings: dict[Primitive, Lowering] = {}
# element-wise primitives as scalar expressions: (operand element type, params,
# *operand texts) -> text; inlined into loops and scalar computations
ScalarExpr = Callable[..., str]
scalar_exprs: dict[Primitive, ScalarExpr] = {}
# element-wise ops whose real floating-point code calls a vectorised math function
# (compile/kernels/vecmath.py): the work per element that makes a loop worth threads
vector_math: set[Primitive] = set()

_ = Any  # (typing only)
