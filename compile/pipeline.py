"""The compile pipeline: a traced graph to a program of compiled kernels.

The passes, in order, each a module of its own:

1. :mod:`compile.constant_folding` — scalar equations of literals become
   literals;
2. :mod:`compile.dce` — dead-code elimination;
3. :mod:`compile.layout_assignment` — the layout of every intermediate value;
4. :mod:`compile.fusion` — which values are computed inside their
   consumers' loops instead of materialised;
5. :mod:`compile.clusters` — the materialising equations, each with what
   is fused into it, as the kernels of a program (bitcasts need none; runs
   of small ones share a kernel);
6. :mod:`compile.generate` — each kernel's Numba source, written by the
   lowering rules of :mod:`compile.registry` (``compile/lowering/``) through
   :mod:`compile.codegen`'s lowering context;
7. :mod:`compile.kernel` and :mod:`compile.cache` — kernels interned by
   source, their machine code compiled once and kept on disk.

:mod:`compile.program` runs the result.  Graphs whose values are not all
plain arrays (tokens, tuples, bounded dynamic dimensions) and SPMD programs
skip step 5: the whole graph is one generated function.
"""
from __future__ import annotations

from typing import Any, Sequence

from numxla.tracer.graph import Graph
from numxla.tracer.shapes import Shape

from .clusters import clusterable
from .constant_folding import fold_constants
from .dce import eliminate_dead_code
from .layout_assignment import assign_layouts
from .program import ClusterProgram, GraphProgram

__all__ = ["optimize", "lower"]


def optimize(graph: Graph) -> Graph:
    """Passes 1-3: ``graph`` with constants folded, without dead code, its
    intermediate layouts chosen."""
    return assign_layouts(eliminate_dead_code(fold_constants(graph)))


def lower(graph: Graph, out_shapes: Sequence[Shape], *, process_grid: Any = None
          ) -> ClusterProgram | GraphProgram:
    """Passes 4-7 on an optimised ``graph``: its program, results in the
    layouts of ``out_shapes`` (kernels not compiled yet: see ``KernelCall``)."""
    if process_grid is None and clusterable(graph):
        return ClusterProgram(graph, out_shapes)
    return GraphProgram(graph, out_shapes, process_grid=process_grid)
