"""numxla's tracer: XLA's type system, the Graph IR and tracing.

* :mod:`tracer.shapes` — ``PrimitiveType``, ``Shape``, ``Layout``, ``Tile``,
  linear-index math and the text form ``f32[3,5]{1,0:T(2,2)}``.
* :mod:`tracer.core` — abstract values, ``Primitive``, interpreters, tracers.
* :mod:`tracer.graph` — the ``Graph`` IR and the interpreter that builds it.
* :mod:`tracer.tracing` — ``make_graph`` and pytree-level tracing.
* :mod:`tracer.pytree` — pytrees.
"""
from .shapes import (Layout, PrimitiveType, Shape, Tile, from_physical, linear_index,
                     make_shape, multi_index, parse_layout, parse_shape, to_physical)
from .core import (AbstractValue, ConcretizationError, LeakedTracerError, Primitive,
                   Tracer, TracerError, abstractify)
from .graph import Equation, Graph, Literal, Var, eval_graph
from .tracing import ShapeDtypeStruct, make_graph
from .pytree import register_dataclass, register_pytree_node, tree_map

__all__ = [
    "Layout", "PrimitiveType", "Shape", "Tile", "from_physical", "linear_index",
    "make_shape", "multi_index", "parse_layout", "parse_shape", "to_physical",
    "AbstractValue", "ConcretizationError", "LeakedTracerError", "Primitive", "Tracer",
    "TracerError", "abstractify", "Equation", "Graph", "Literal", "Var", "eval_graph",
    "ShapeDtypeStruct", "make_graph", "register_dataclass", "register_pytree_node",
    "tree_map",
]
