"""numxla's backend: ``jit`` compiles traced graphs into Numba kernels that
read and write buffers in their XLA layout.

* :mod:`compile.jit` — ``jit``, ``Lowered``, ``Compiled``.
* :mod:`compile.codegen` — graph → one Numba function; the lowering table.
* :mod:`compile.kernels` — lowering rules, one module per op family.
* :mod:`compile.layout_index` — linear-index expressions for any layout.
* :mod:`compile.runtime` — ``Array`` (physical buffer + Shape), ``device_put``.
* :mod:`compile.cache` — the on-disk cache of compiled code.
* :mod:`compile.replicas` — ``pmap``: SPMD runs whose collectives exchange data.
"""
from .jit import Compiled, JittedFunction, Lowered, jit
from .replicas import CollectiveError, pmap
from .runtime import Array, device_put

__all__ = ["jit", "JittedFunction", "Lowered", "Compiled", "Array", "device_put", "pmap",
           "CollectiveError"]
