"""``jax.sharding``: meshes, partition specs and shardings, so programs
written for many devices run unchanged.

numxla computes on one CPU device (``jax.devices()`` lists
``NUMXLA_DEVICE_COUNT`` of them, default 1, for ``pmap``).  A sharding here
describes how JAX *would* lay an array out: ``device_put(x, sharding)``
records it on the result (``x.sharding``) and moves nothing, since every
array is whole in one process's memory.  ``shard_map`` (``numxla._shard_map``)
gives a mesh axis its meaning by running the shards as ``vmap`` lanes.
"""
from __future__ import annotations

import contextlib
import enum
import math
from collections import OrderedDict
from typing import Any, Iterator, Sequence

import numpy as np

from numxla.tracer.core import OPERATORS

__all__ = ["PartitionSpec", "Mesh", "AbstractMesh", "AxisType", "Sharding", "NamedSharding",
           "SingleDeviceSharding", "get_mesh", "set_mesh", "use_mesh", "get_abstract_mesh",
           "make_single_device_sharding", "reshard"]


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class PartitionSpec(tuple):
    """How each dimension of an array is split over mesh axes: an entry per
    leading dimension, a mesh axis name, a tuple of names, or ``None``
    (not split).  Missing trailing entries are ``None``."""

    UNCONSTRAINED = _Unconstrained()

    def __new__(cls, *partitions: Any) -> "PartitionSpec":
        return super().__new__(cls, tuple(tuple(p) if isinstance(p, list) else p
                                          for p in partitions))

    def __repr__(self) -> str:
        return "P(" + ", ".join(repr(p) for p in self) + ")"

    __str__ = __repr__

    def __getnewargs__(self) -> tuple:
        return tuple(self)


P = PartitionSpec


class AxisType(enum.Enum):
    """How the compiler may treat a mesh axis (recorded only: one device)."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()


class Mesh:
    """A named grid of devices: ``Mesh(np.array(jax.devices()).reshape(...),
    ("data", "model"))``.  Usable as a context (``with mesh:``) that makes it
    the current mesh."""

    def __init__(self, devices: Any, axis_names: str | Sequence[str],
                 axis_types: Any = None):
        self.devices = np.asarray(devices, dtype=object) if not isinstance(
            devices, np.ndarray) else devices
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if self.devices.ndim != len(self.axis_names):
            raise ValueError(f"Mesh: devices of shape {self.devices.shape} for axis names "
                             f"{self.axis_names}")
        n = len(self.axis_names)
        self.axis_types = (tuple(axis_types) if isinstance(axis_types, (tuple, list))
                           else (axis_types or AxisType.Auto,) * n)

    @property
    def shape(self) -> "OrderedDict[str, int]":
        return OrderedDict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.devices.size == 0

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list[Any]:
        return list(self.devices.flat)

    @property
    def abstract_mesh(self) -> "AbstractMesh":
        return AbstractMesh(self.axis_sizes, self.axis_names, axis_types=self.axis_types)

    def __enter__(self) -> "Mesh":
        _mesh_stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _mesh_stack.pop()

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.devices.shape == other.devices.shape
                and list(self.devices.flat) == list(other.devices.flat))

    def __hash__(self) -> int:
        return hash((self.axis_names, self.devices.shape))

    def __repr__(self) -> str:
        axes = ", ".join(f"'{k}': {v}" for k, v in self.shape.items())
        return f"Mesh({axes})"


class AbstractMesh:
    """A mesh's axis names and sizes without devices."""

    def __init__(self, axis_sizes: Sequence[int], axis_names: Sequence[str], *,
                 axis_types: Any = None):
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        self.axis_types = axis_types

    @property
    def shape(self) -> "OrderedDict[str, int]":
        return OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        return not self.axis_names


_mesh_stack: list[Any] = []


def get_mesh() -> Any:
    """The current mesh (``with mesh:`` / ``set_mesh``), else an empty one."""
    return _mesh_stack[-1] if _mesh_stack else AbstractMesh((), ())


get_abstract_mesh = get_mesh


@contextlib.contextmanager
def use_mesh(mesh: Any) -> Iterator[Any]:
    _mesh_stack.append(mesh)
    try:
        yield mesh
    finally:
        _mesh_stack.pop()


class _MeshSetting:
    """What ``set_mesh(mesh)`` returns: the mesh is current from the call on,
    or only inside ``with set_mesh(mesh):``."""

    def __init__(self, mesh: Any):
        self.mesh = mesh
        _mesh_stack.append(mesh)

    def __enter__(self) -> Any:
        return self.mesh

    def __exit__(self, *exc: Any) -> None:
        if _mesh_stack and _mesh_stack[-1] is self.mesh:
            _mesh_stack.pop()


def set_mesh(mesh: Any) -> _MeshSetting:
    return _MeshSetting(mesh)


class Sharding:
    """What every sharding answers: its devices and the shape of one shard."""

    memory_kind: str | None = None

    @property
    def device_set(self) -> set[Any]:
        raise NotImplementedError

    @property
    def addressable_devices(self) -> set[Any]:
        return self.device_set

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        return tuple(global_shape)

    def with_memory_kind(self, kind: str) -> "Sharding":
        return self


class SingleDeviceSharding(Sharding):
    """The whole array on one device (every numxla array's sharding)."""

    def __init__(self, device: Any, *, memory_kind: str | None = None):
        self._device = device
        self.memory_kind = memory_kind

    @property
    def device_set(self) -> set[Any]:
        return {self._device}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self) -> int:
        return hash(self._device)

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r})"


class NamedSharding(Sharding):
    """An array split over ``mesh`` as ``spec`` says (see :class:`PartitionSpec`)."""

    def __init__(self, mesh: Any, spec: Any = PartitionSpec(), *,
                 memory_kind: str | None = None):
        self.mesh = mesh
        self.spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*(spec or ()))
        self.memory_kind = memory_kind
        for name in self._axes():
            if name not in mesh.axis_names:
                raise ValueError(f"NamedSharding: {self.spec} names axis {name!r}, not one of "
                                 f"the mesh's {mesh.axis_names}")

    def _axes(self) -> list[str]:
        names = []
        for entry in self.spec:
            if entry is None or entry is PartitionSpec.UNCONSTRAINED:
                continue
            names += list(entry) if isinstance(entry, tuple) else [entry]
        return names

    @property
    def device_set(self) -> set[Any]:
        return set(self.mesh.devices.flat) if hasattr(self.mesh, "devices") else set()

    @property
    def is_fully_replicated(self) -> bool:
        return all(self.mesh.shape[a] == 1 for a in self._axes())

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        shape = list(global_shape)
        for d, entry in enumerate(self.spec):
            if entry is None or entry is PartitionSpec.UNCONSTRAINED:
                continue
            ways = math.prod(self.mesh.shape[a] for a in (
                entry if isinstance(entry, tuple) else (entry,)))
            if shape[d] % ways:
                raise ValueError(f"shard_shape: dimension {d} of size {shape[d]} does not "
                                 f"split {ways} ways")
            shape[d] //= ways
        return tuple(shape)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NamedSharding) and other.mesh == self.mesh
                and other.spec == self.spec)

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def make_single_device_sharding(device: Any) -> SingleDeviceSharding:
    return SingleDeviceSharding(device)


def _default_sharding() -> SingleDeviceSharding:
    from numxla._api import devices
    return SingleDeviceSharding(devices()[0])


def sharding_of(x: Any) -> Sharding:
    """An array's sharding: the one ``device_put`` recorded, else its device's."""
    return getattr(x, "_numxla_sharding", None) or _default_sharding()


def with_sharding(x: Any, sharding: Any) -> Any:
    """``x`` (an array, as it is) carrying ``sharding`` for ``x.sharding``;
    a spec alone is taken on the current mesh."""
    if isinstance(sharding, PartitionSpec):
        mesh = get_mesh()
        if not isinstance(mesh, Mesh):
            return x
        sharding = NamedSharding(mesh, sharding)
    if isinstance(sharding, Sharding):
        try:
            x._numxla_sharding = sharding
        except AttributeError:       # a scalar or tracer: nothing to record on
            pass
    return x


def _new_handle(x: Any) -> Any:
    """Another array object over ``x``'s data (so recording a sharding on it
    leaves ``x`` as it was)."""
    if isinstance(x, np.ndarray):
        return x.view(type(x))
    if hasattr(x, "buffer") and hasattr(x, "xla_shape"):
        return type(x).wrap(x.buffer, x.xla_shape)
    return x


def reshard(x: Any, out_shardings: Any) -> Any:
    """``x`` with its recorded sharding changed (the data stays where it is)."""
    from numxla.tracer import pytree
    return pytree.tree_map(lambda a: with_sharding(_new_handle(a), out_shardings), x)


OPERATORS["attr:sharding"] = sharding_of
