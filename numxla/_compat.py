"""JAX's top-level names for settings, devices and processes that mean
little on numxla's single CPU device, so programs that use them run:

* settings as context managers (``with jax.enable_x64(True):``,
  ``jax.debug_nans(True)``...): ``enable_x64`` and ``disable_jit`` act (see
  ``tracer.config``), the others are recorded in ``jax.config`` only;
* ``transfer_guard``: nothing moves between devices here, so nothing to guard;
* the process and host queries of multi-host JAX (one process, one host);
* building arrays from callbacks or per-device pieces (one device: one piece);
* ``Device``, the type of ``jax.devices()``'s entries.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from numxla.tracer.config import config

from ._api import CpuDevice, device_put, devices, process_count, process_index

__all__ = ["Device", "enable_x64", "debug_nans", "debug_infs", "numpy_dtype_promotion",
           "numpy_rank_promotion", "log_compiles", "explain_cache_misses",
           "default_prng_impl", "check_tracer_leaks", "checking_leaks", "enable_checks",
           "softmax_custom_jvp", "threefry_partitionable", "legacy_prng_key",
           "enable_custom_prng", "debug_key_reuse", "transfer_guard",
           "transfer_guard_host_to_device", "transfer_guard_device_to_host",
           "transfer_guard_device_to_device", "host_count", "host_id", "host_ids",
           "process_indices", "live_arrays", "effects_barrier", "copy_to_host_async",
           "make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data"]

Device = CpuDevice


class _Setting:
    """A JAX setting as its top-level name: ``name(value)`` is a context
    manager setting it for a block; ``name.value`` reads it."""

    def __init__(self, key: str):
        self.key = key
        self.__name__ = key[len("jax_"):]

    @property
    def value(self) -> Any:
        return config.read(self.key)

    @contextlib.contextmanager
    def __call__(self, new_val: Any = True) -> Iterator[None]:
        saved = config.read(self.key)
        config.update(self.key, new_val)
        try:
            yield
        finally:
            config.update(self.key, saved)

    def __repr__(self) -> str:
        return f"<setting {self.key}={self.value!r}>"


enable_x64 = _Setting("jax_enable_x64")
debug_nans = _Setting("jax_debug_nans")
debug_infs = _Setting("jax_debug_infs")
numpy_dtype_promotion = _Setting("jax_numpy_dtype_promotion")
numpy_rank_promotion = _Setting("jax_numpy_rank_promotion")
log_compiles = _Setting("jax_log_compiles")
explain_cache_misses = _Setting("jax_explain_cache_misses")
default_prng_impl = _Setting("jax_default_prng_impl")
check_tracer_leaks = _Setting("jax_check_tracer_leaks")
checking_leaks = check_tracer_leaks
enable_checks = _Setting("jax_enable_checks")
softmax_custom_jvp = _Setting("jax_softmax_custom_jvp")
threefry_partitionable = _Setting("jax_threefry_partitionable")
legacy_prng_key = _Setting("jax_legacy_prng_key")
enable_custom_prng = _Setting("jax_enable_custom_prng")
debug_key_reuse = _Setting("jax_debug_key_reuse")


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Accepted: one device, so there are no transfers to allow or disallow."""
    yield


transfer_guard_host_to_device = transfer_guard_device_to_host = \
    transfer_guard_device_to_device = transfer_guard


def host_count(backend: Any = None) -> int:
    return process_count()


def host_id(backend: Any = None) -> int:
    return process_index()


def host_ids(backend: Any = None) -> list[int]:
    return list(range(process_count()))


def process_indices(backend: Any = None) -> list[int]:
    return list(range(process_count()))


def live_arrays(platform: Any = None) -> list[Any]:
    """Arrays are NumPy-owned memory here: none is tracked."""
    return []


def effects_barrier() -> None:
    """Every effect (``debug.print``, callbacks) has run when its call returns."""


def copy_to_host_async(x: Any) -> Any:
    """``x``: arrays already live in host memory."""
    return x


def make_array_from_callback(shape: Sequence[int], sharding: Any,
                             data_callback: Callable[[Any], Any], dtype: Any = None) -> Any:
    """The array ``data_callback(index)`` gives for its one shard: ``index``
    is a tuple of full slices (the one device holds everything)."""
    index = tuple(slice(None) for _ in shape)
    data = np.asarray(data_callback(index), dtype=dtype)
    if data.shape != tuple(shape):
        raise ValueError(f"make_array_from_callback: the callback gave shape {data.shape} "
                         f"for one shard of shape {tuple(shape)}")
    return device_put(data, sharding)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Any,
                                         arrays: Sequence[Any], *, dtype: Any = None) -> Any:
    """The global array from its per-device pieces (one device: one piece)."""
    if len(arrays) != 1 or tuple(np.shape(arrays[0])) != tuple(shape):
        raise ValueError(f"make_array_from_single_device_arrays: {len(arrays)} piece(s) for "
                         f"shape {tuple(shape)} on {len(devices())} device(s)")
    return device_put(arrays[0], sharding)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Sequence[int] | None = None) -> Any:
    """The global array from this process's data (one process: all of it)."""
    return device_put(local_data, sharding)
