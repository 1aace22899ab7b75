"""JAX's top-level helpers that are not transforms of their own: shapes
without computing (``eval_shape``), graphs as text (``make_jaxpr``),
``hessian``/``linearize`` from ``jvp``/``jacfwd``/``jacrev``, and the device
queries a JAX program asks (``NUMXLA_DEVICE_COUNT`` CPU devices per process,
default 1: the replicas ``pmap(backend="mpi")`` runs on each MPI rank; on
threads ``pmap`` runs any number of replicas)."""
from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from numxla.autodiff import jacfwd, jacrev, jvp
from numxla.autodiff.implicit import closure_convert
from numxla.tracer import pytree
from numxla.tracer.graph import Graph
from numxla.tracer.tracing import ShapeDtypeStruct, trace_pytree

__all__ = ["ShapeDtypeStruct", "eval_shape", "make_jaxpr", "hessian", "linearize",
           "block_until_ready", "device_put", "device_get", "devices", "local_devices",
           "device_count",
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


def device_put(x: Any, device: Any = None, *, src: Any = None, donate: bool = False,
               may_alias: Any = None) -> Any:
    """JAX's ``device_put``: every array of the pytree ``x`` as a runtime array.
    ``device`` may be a device, a sharding or a ``PartitionSpec`` (on the
    current mesh; numxla has one CPU device: the data stays whole, and the
    sharding is recorded for ``x.sharding``; a pytree of them matches ``x``),
    or numxla's own layout argument (``Layout``, layout text such as
    ``"{0,1}"``, or a ``minor_to_major`` sequence)."""
    from numxla.compile import device_put as put
    from numxla.sharding import PartitionSpec, Sharding, with_sharding
    if isinstance(device, (Sharding, PartitionSpec)) or device is None or isinstance(
            device, CpuDevice):
        return pytree.tree_map(lambda leaf: with_sharding(put(leaf), device), x)
    if isinstance(device, (str, tuple, list)) or type(device).__name__ in ("Layout", "Shape"):
        return pytree.tree_map(lambda leaf: put(leaf, device), x)
    # a pytree prefix of x whose leaves are devices or shardings
    targets, target_tree = pytree.flatten(device, is_leaf=lambda d: d is None or isinstance(
        d, (Sharding, PartitionSpec, CpuDevice)))
    return target_tree.unflatten([device_put(sub, t) for t, sub in
                                  zip(targets, target_tree.flatten_up_to(x))])


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

    def __str__(self) -> str:
        return f"{self.platform}:{self.id}"


def local_device_count(backend: str | None = None) -> int:
    """This process's devices: ``NUMXLA_DEVICE_COUNT`` (as XLA's
    ``--xla_force_host_platform_device_count``), else 1."""
    from numxla.compile.spmd.pmap import local_device_count as count
    return count()


def devices(backend: str | None = None) -> list[CpuDevice]:
    """Every process's devices, process ``p`` holding ids ``p*L .. p*L+L-1``."""
    per = local_device_count()
    return [CpuDevice(i, process_index=i // per) for i in range(per * process_count())]


def local_devices(process_index: int | None = None, backend: str | None = None
                  ) -> list[CpuDevice]:
    """The devices of this process (or of ``process_index``)."""
    index = globals()["process_index"]() if process_index is None else process_index
    return [d for d in devices() if d.process_index == index]


def device_count(backend: str | None = None) -> int:
    """Devices of every process: ``local_device_count() * process_count()``."""
    return local_device_count() * process_count()


def _mpi_world() -> Any:
    """MPI's world communicator when this process runs under ``mpiexec``
    (pmap's MPI backend: one process per rank), else None."""
    if "mpi4py.MPI" not in sys.modules and not any(
            v in os.environ for v in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK")):
        return None
    try:
        from numxla.compile.spmd.faults import mpi
        return mpi().COMM_WORLD
    except ImportError:
        return None


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


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], axis_types: Any = None, *,
              devices: Sequence[Any] | None = None) -> Any:
    """A ``Mesh`` of ``axis_shapes`` over the devices (see ``numxla.sharding``)."""
    from numxla.experimental.mesh_utils import create_device_mesh
    from numxla.sharding import Mesh
    return Mesh(create_device_mesh(axis_shapes, devices), axis_names, axis_types=axis_types)


# -- more of JAX's top level ------------------------------------------------------------------

def jacobian(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
             holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """``jax.jacobian``: ``jacrev``."""
    return jacrev(fn, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)


def linear_transpose(fn: Callable[..., Any], *primals: Any, reduce_axes: Any = ()
                     ) -> Callable[..., tuple]:
    """The transpose of the linear function ``fn`` at inputs shaped as
    ``primals``: ``f_t(cotangent) -> tuple of input cotangents`` (the VJP of
    ``fn`` at zeros, which for a linear function is its transpose)."""
    from numxla.autodiff import vjp
    zeros = pytree.tree_map(lambda p: np.zeros(np.shape(p), _dtype_of(p)), primals)
    _, pullback = vjp(fn, *zeros)

    def transposed(*cotangents: Any) -> tuple:
        return tuple(pullback(*cotangents))
    return transposed


def _dtype_of(x: Any) -> np.dtype:
    from numxla.tracer.core import abstractify
    return abstractify(x).dtype


_callbacks: dict[Any, str] = {}


def _host_call(callback: Callable[..., Any], result_shape_dtypes: Any, args: tuple,
               kwargs: dict, side_effect: bool) -> Any:
    """``callback(*args, **kwargs)`` on the host (NumPy values) as a custom
    call whose results are shaped as ``result_shape_dtypes``."""
    from numxla.primitives.side_effects import custom_call, register_custom_call_target
    leaves, in_tree = pytree.flatten((args, kwargs))
    out_leaves, out_tree = pytree.flatten(result_shape_dtypes)
    key = (callback, in_tree, out_tree)
    name = _callbacks.get(key)
    if name is None:
        name = _callbacks[key] = f"numxla_host_callback_{len(_callbacks)}"
        dtypes = [np.dtype(s.dtype) for s in out_leaves]

        def host(*values: Any) -> tuple:
            call_args, call_kwargs = in_tree.unflatten(values)
            results = pytree.tree_leaves(callback(*call_args, **call_kwargs))
            return tuple(np.asarray(r, dtype=d) for r, d in zip(results, dtypes))
        register_custom_call_target(name, host)
    shapes = [ShapeDtypeStruct(tuple(s.shape), s.dtype) for s in out_leaves]
    if not shapes and not side_effect:
        return out_tree.unflatten([])
    outs = custom_call(name, leaves, shapes, has_side_effect=side_effect)
    return out_tree.unflatten(list(outs))


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None,
                  vectorized: Any = None, **kwargs: Any) -> Any:
    """Call the host function ``callback(*args, **kwargs)`` (on NumPy arrays)
    from eager code or compiled code; ``result_shape_dtypes`` (a pytree of
    ``ShapeDtypeStruct`` s or arrays) says what it returns.  Under ``vmap``
    it is called once per batch element.  It has no derivative."""
    return _host_call(callback, result_shape_dtypes, args, kwargs, side_effect=False)


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """``pure_callback`` for a callback with side effects (``jax.experimental.
    io_callback``): compiled code keeps every call, in program order, even
    when its results are unused."""
    return _host_call(callback, result_shape_dtypes, args, kwargs, side_effect=True)


def custom_gradient(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun(*args) -> (out, vjp)``, with ``vjp(cotangent)`` the cotangents of
    ``args``: a function whose derivative is that ``vjp`` (a ``custom_vjp``)."""
    from numxla.autodiff.custom import custom_vjp

    @custom_vjp
    def wrapped(*args: Any) -> Any:
        return fun(*args)[0]

    def fwd(*args: Any) -> Any:
        out, vjp_fn = fun(*args)
        return out, _Residual(vjp_fn)

    def bwd(res: Any, g: Any) -> Any:
        cts = res.fn(g)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)
    wrapped.defvjp(fwd, bwd)
    return wrapped


class _Residual:
    """A function carried as a residual (no leaves)."""

    def __init__(self, fn: Callable[..., Any]):
        self.fn = fn


pytree.register_pytree_node(_Residual, lambda c: ((), c.fn),
                            lambda fn, _: _Residual(fn))



@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Any:
    """While the block runs, ``jit``-decorated functions run eagerly."""
    import importlib
    _jit_module = importlib.import_module("numxla.compile.jit")
    saved = getattr(_jit_module, "_DISABLED", False)
    _jit_module._DISABLED = disable
    try:
        yield
    finally:
        _jit_module._DISABLED = saved


@contextlib.contextmanager
def ensure_compile_time_eval() -> Any:
    """While the block runs, ops on concrete values run eagerly even under
    ``jit``: their results are concrete (usable in Python control flow);
    ops on traced values are traced as usual."""
    from numxla.tracer.core import eval_constants
    with eval_constants():
        yield


@contextlib.contextmanager
def default_matmul_precision(precision: Any) -> Any:
    """Accepted for JAX compatibility: numxla's matmuls are in the types' full precision."""
    yield


@contextlib.contextmanager
def default_device(device: Any) -> Any:
    yield


@contextlib.contextmanager
def named_scope(name: str) -> Any:
    yield


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    return fun


def typeof(x: Any) -> ShapeDtypeStruct:
    """The abstract type of ``x`` (shape and dtype)."""
    from numxla.tracer.core import abstractify
    aval = abstractify(x)
    return ShapeDtypeStruct(aval.dimensions, aval.dtype)


def clear_caches() -> None:
    """Nothing to clear eagerly: each ``jit`` function keeps its own compiled programs."""


def print_environment_info(return_string: bool = False) -> str | None:
    import platform

    import numba
    text = (f"numxla: 0.1.0\nnumpy: {np.__version__}\nnumba: {numba.__version__}\n"
            f"python: {sys.version}\nplatform: {platform.platform()}\n"
            f"devices: {devices()}")
    if return_string:
        return text
    print(text)
    return None


class _CheckpointPolicies:
    """``jax.checkpoint_policies``: numxla's ``checkpoint`` recomputes
    everything, whatever the policy; the names exist so code passing them runs."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def policy(*args: Any, **kwargs: Any) -> bool:
            return False
        return policy


checkpoint_policies = _CheckpointPolicies()

__all__ += ["jacobian", "linear_transpose", "pure_callback", "io_callback", "make_mesh",
            "custom_gradient", "closure_convert", "disable_jit", "ensure_compile_time_eval",
            "default_matmul_precision", "default_device", "named_scope", "named_call", "typeof",
            "clear_caches", "print_environment_info", "checkpoint_policies"]
