"""Collectives over ``vmap``'s named axes: ``vmap(f, axis_name="i")`` with
``lax.psum(x, "i")``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
``axis_index`` and ``ppermute`` inside ``f``, as JAX defines them.

Along a vmapped axis the "replicas" are the batch elements, so a collective
is an op on the batch dimension of the value: a sum over it (the result no
longer depends on the element, so it is unbatched), a move of it to the
gathered position, an ``iota`` batched along it.  ``vmap`` binds its name to
its :class:`BatchInterpreter` while ``f`` runs; the collectives of
``primitives.collectives`` ask :func:`named_collective` first, which answers
NotImplemented for a name that no running ``vmap`` binds (a ``pmap`` axis).
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Iterator, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import abstractify, set_interpreter

__all__ = ["axis_bound", "named_collective"]


class _Bound(threading.local):
    def __init__(self):
        self.stack: list[tuple[Any, Any]] = []  # (name, BatchInterpreter), innermost last


_bound = _Bound()


@contextlib.contextmanager
def axis_bound(name: Any, interpreter: Any) -> Iterator[None]:
    """``name`` is ``interpreter``'s axis while the block runs."""
    _bound.stack.append((name, interpreter))
    try:
        yield
    finally:
        _bound.stack.pop()


def _interpreter(name: Any) -> Any:
    for bound_name, interp in reversed(_bound.stack):
        if bound_name == name and interp.active:
            return interp
    return None


def named_collective(op: str, x: Any, axis_name: Any, **params: Any) -> Any:
    """``op`` ("psum", "pmean", "pmax", "pmin", "all_gather", "axis_index",
    "ppermute") over the vmapped axis ``axis_name``; NotImplemented if no
    running ``vmap`` has that name.  A tuple of names is handled one by one."""
    if isinstance(axis_name, (tuple, list)):
        if not axis_name or any(_interpreter(n) is None for n in axis_name):
            return NotImplemented
        for name in axis_name:
            x = named_collective(op, x, name, **params)
        return x
    interp = _interpreter(axis_name)
    if interp is None:
        return NotImplemented
    if op == "axis_index":
        import numxla.primitives as lax
        with set_interpreter(interp.parent):
            index = lax.iota(np.int32, interp.size)
        return interp.wrap(index, 0)
    return pytree.tree_map(lambda leaf: _one(op, leaf, interp, params), x)


_ELEMENTWISE_OVER_AXIS = ("psum", "pmean", "pmax", "pmin")


def _one(op: str, leaf: Any, interp: Any, params: dict) -> Any:
    import numxla.primitives as lax
    import numxla.primitives.numpy as jnp

    from .batching import BatchTracer
    owner = leaf._interpreter if isinstance(leaf, BatchTracer) else None
    if owner is not None and owner is not interp:
        # batched by a vmap inside the named one: the collective acts on each of
        # that vmap's elements alike, so apply it to the batched value
        if op not in _ELEMENTWISE_OVER_AXIS:
            raise NotImplementedError(f"{op} over an outer vmap axis from inside another vmap")
        inner_value, inner_dim = owner.lift(leaf)
        with set_interpreter(owner.parent):
            out = _one(op, inner_value, interp, params)
        return owner.wrap(out, inner_dim)
    value, dim = interp.lift(leaf)
    n = interp.size
    with set_interpreter(interp.parent):
        if op in ("psum", "pmean"):
            out = jnp.sum(value, axis=dim) if dim is not None else value * n
            if op == "pmean":
                out = jnp.true_divide(out, n)
            elif dim is None:
                out = lax.convert_element_type(out, abstractify(value).dtype)
            return interp.wrap(out, None)
        if op in ("pmax", "pmin"):
            if dim is None:
                return value
            return interp.wrap((jnp.max if op == "pmax" else jnp.min)(value, axis=dim), None)
        if op == "all_gather":
            axis, tiled = params.get("axis", 0), params.get("tiled", False)
            stacked = jnp.moveaxis(value, dim, 0) if dim is not None else \
                jnp.broadcast_to(value, (n,) + abstractify(value).dimensions)
            rank = abstractify(stacked).ndim
            at = axis % (rank - 1 if tiled else rank)
            if tiled:
                shape = abstractify(stacked).dimensions
                moved = jnp.moveaxis(stacked, 0, at)
                merged = shape[1:at + 1] + (n * shape[at + 1],) + shape[at + 2:]
                return interp.wrap(jnp.reshape(moved, merged), None)
            return interp.wrap(jnp.moveaxis(stacked, 0, at), None)
        if op == "ppermute":
            perm: Sequence[Sequence[int]] = params["perm"]
            if dim is None:
                value, dim = jnp.broadcast_to(value, (n,) + abstractify(value).dimensions), 0
            source = np.full(n, -1, np.int64)
            for s, t in perm:
                source[t] = s
            taken = jnp.take(value, np.maximum(source, 0).astype(np.int32), axis=dim)
            shape = [1] * abstractify(taken).ndim
            shape[dim] = n
            keep = (source >= 0).reshape(shape)
            return interp.wrap(jnp.where(keep, taken, jnp.zeros_like(taken)), dim)
    raise ValueError(f"named_collective: unknown collective {op!r}")
