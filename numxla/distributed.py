"""``jax.distributed``: multi-process start-up.  numxla's processes are MPI
ranks (``pmap(backend="mpi")``, started by ``mpiexec``), so ``initialize``
has nothing to connect; it is accepted so programs that call it run."""
from __future__ import annotations

from typing import Any

__all__ = ["initialize", "shutdown", "is_initialized"]

_state = {"initialized": False}


def initialize(coordinator_address: Any = None, num_processes: Any = None,
               process_id: Any = None, local_device_ids: Any = None, **kwargs: Any) -> None:
    _state["initialized"] = True


def shutdown() -> None:
    _state["initialized"] = False


def is_initialized() -> bool:
    return _state["initialized"]
