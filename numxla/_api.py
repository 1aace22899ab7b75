"""JAX's top-level helpers that are not transforms of their own: shapes
without computing (``eval_shape``), graphs as text (``make_jaxpr``),
``hessian``/``linearize`` from ``jvp``/``jacfwd``/``jacrev``, and the device
queries a JAX program asks (one CPU device per process; ``pmap`` runs any
number of replicas on threads)."""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from numxla.autodiff import jacfwd, jacrev, jvp
from numxla.tracer import pytree
from numxla.tracer.graph import Graph
from numxla.tracer.tracing import ShapeDtypeStruct, trace_pytree

__all__ = ["ShapeDtypeStruct", "eval_shape", "make_jaxpr", "hessian", "linearize",
           "block_until_ready", "device_get", "devices", "local_devices", "device_count",
           "local_device_count", "process_index", "process_count", "default_backend"]


def eval_shape(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fn(*args, **kwargs)`` as ``ShapeDtypeStruct``s,
    traced with abstract values, nothing computed."""
    graph, _ = trace_pytree(fn, args, kwargs)
    return graph.out_tree.unflatten([ShapeDtypeStruct(av.dimensions, av.dtype)
                                     for av in graph.out_avals])


class _GraphText:
    """What ``make_jaxpr(f)(*args)`` returns: the traced graph, printed as text."""

    def __init__(self, graph: Graph):
        self.graph = graph

    def __str__(self) -> str:
        return self.graph.as_text()

    __repr__ = __str__

    @property
    def out_avals(self) -> tuple:
        return self.graph.out_avals


def make_jaxpr(fn: Callable[..., Any], static_argnums: int | Sequence[int] = ()
               ) -> Callable[..., _GraphText]:
    """``make_jaxpr(f)(*args)``: the graph ``f`` traces to (HLO-like text when printed)."""
    def traced(*args: Any, **kwargs: Any) -> _GraphText:
        graph, _ = trace_pytree(fn, args, kwargs, static_argnums=static_argnums or None)
        return _GraphText(graph)
    return traced


def hessian(fn: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The matrix of second derivatives: forward over reverse, as JAX's."""
    return jacfwd(jacrev(fn, argnums), argnums)


def linearize(fn: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``(fn(*primals), f_jvp)`` with ``f_jvp(*tangents)`` the JVP at ``primals``
    (evaluated by ``jvp`` on each call)."""
    out = fn(*primals)

    def f_jvp(*tangents: Any) -> Any:
        return jvp(fn, primals, tangents)[1]
    return out, f_jvp


def block_until_ready(x: Any) -> Any:
    """``x``, its arrays computed (they always are: calls return when done)."""
    return pytree.tree_map(lambda a: a.block_until_ready() if hasattr(a, "block_until_ready")
                           else a, x)


def device_get(x: Any) -> Any:
    """``x`` with every array as a NumPy array."""
    return pytree.tree_map(np.asarray, x)


@dataclass(frozen=True)
class CpuDevice:
    id: int = 0
    platform: str = "cpu"
    device_kind: str = "cpu"
    process_index: int = 0

    def __repr__(self) -> str:
        return f"CpuDevice(id={self.id})"


def _count() -> int:
    """``NUMXLA_DEVICE_COUNT`` (as XLA's ``--xla_force_host_platform_device_count``), else 1."""
    return max(1, int(os.environ.get("NUMXLA_DEVICE_COUNT", "1")))


def devices(backend: str | None = None) -> list[CpuDevice]:
    return [CpuDevice(i) for i in range(_count())]


local_devices = devices


def device_count(backend: str | None = None) -> int:
    return _count()


local_device_count = device_count


def _mpi_world() -> Any:
    """MPI's world communicator when this process runs under ``mpiexec``
    (pmap's MPI backend: one process per rank), else None."""
    if "mpi4py.MPI" not in sys.modules and not any(
            v in os.environ for v in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")):
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    return MPI.COMM_WORLD


def process_index() -> int:
    """This process's rank among the MPI processes (0 without MPI)."""
    world = _mpi_world()
    return 0 if world is None else world.rank


def process_count() -> int:
    """How many MPI processes run the program (1 without MPI)."""
    world = _mpi_world()
    return 1 if world is None else world.size


def default_backend() -> str:
    return "cpu"
