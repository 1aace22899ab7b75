"""``jax.experimental.mesh_utils``: device grids for ``Mesh``."""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False, allow_split_physical_axes: bool = False
                       ) -> np.ndarray:
    """The devices (``jax.devices()`` unless given) as an array of ``mesh_shape``."""
    from numxla._api import devices as all_devices
    devs = list(all_devices() if devices is None else devices)
    if math.prod(mesh_shape) != len(devs):
        raise ValueError(f"create_device_mesh: a mesh of shape {tuple(mesh_shape)} needs "
                         f"{math.prod(mesh_shape)} devices, there are {len(devs)}")
    grid = np.empty(len(devs), dtype=object)
    grid[:] = devs
    return grid.reshape(tuple(mesh_shape))


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, **kwargs: Any) -> np.ndarray:
    """One process's mesh times the processes' (one process here: their product)."""
    return create_device_mesh([a * b for a, b in zip(mesh_shape, dcn_mesh_shape)], devices)
