"""numxla's backend: ``jit`` compiles traced graphs into Numba kernels that
read and write buffers in their XLA layout.

* :mod:`compile.jit` — ``jit``, ``Lowered``, ``Compiled``.
* :mod:`compile.pipeline` — the passes from a traced graph to a program of kernels.
* :mod:`compile.generate`, :mod:`compile.codegen` — a kernel's Numba source; what lowering rules write with.
* :mod:`compile.tiers`, :mod:`compile.background` — tier 0 and background compile workers.
* :mod:`compile.lowering` — lowering rules, one module per op family.
* :mod:`compile.kernels` — the ``@njit`` kernels generated code calls.
* :mod:`compile.layout_index` — linear-index expressions for any layout.
* :mod:`compile.runtime` — ``Array`` (physical buffer + Shape), ``device_put``.
* :mod:`compile.cache` — the on-disk cache of compiled code.
* :mod:`compile.spmd` — ``pmap``: SPMD runs whose collectives exchange data.
"""
from .jit import Compiled, JittedFunction, Lowered, jit
from .spmd.pmap import pmap
from .spmd.rendezvous import CollectiveError
from .runtime import Array, device_put

__all__ = ["jit", "JittedFunction", "Lowered", "Compiled", "Array", "device_put", "pmap",
           "CollectiveError"]
