"""``jax.experimental.shard_map``: the older spelling of ``jax.shard_map``
(mesh and specs positional, ``check_rep`` for ``check_vma``)."""
from __future__ import annotations

from typing import Any, Callable

from numxla._shard_map import shard_map as _shard_map

__all__ = ["shard_map"]


def shard_map(f: Callable[..., Any], mesh: Any, in_specs: Any, out_specs: Any,
              check_rep: bool = True, auto: Any = frozenset()) -> Callable[..., Any]:
    """``f`` mapped over the shards of ``mesh`` (see ``numxla._shard_map``)."""
    manual = frozenset(a for a in mesh.axis_names if a not in auto) if auto else frozenset()
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, axis_names=manual)
