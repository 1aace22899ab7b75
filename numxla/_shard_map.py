"""``jax.shard_map`` on one CPU device: the shards are ``vmap`` lanes.

Each argument is cut into the blocks its ``in_specs`` entry gives (a
dimension split over mesh axes ``("x", "y")`` becomes ``x``-major blocks),
the blocks are stacked along one leading axis per mesh axis, and ``f`` runs
under nested ``vmap`` s named after the mesh axes, so ``lax.psum(v, "x")``,
``lax.axis_index("x")``, ``all_gather``... see the other shards as they
would on real devices.  Results are put back together as ``out_specs``
says; a mesh axis an output's spec does not name must leave it replicated,
and shard 0's copy is returned.  On a one-device mesh ``f`` simply sees
the whole arrays.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

from numxla.autodiff import vmap
from numxla.primitives import composites, shape_ops as lax
from numxla.tracer import pytree
from numxla.tracer.core import abstractify

from .sharding import NamedSharding, PartitionSpec, get_mesh, sharding_of

__all__ = ["shard_map", "Infer"]


class _Infer:
    """``in_specs`` left out: each argument's spec from its sharding."""

    def __repr__(self) -> str:
        return "Infer"


Infer = _Infer()


def _is_spec(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _leaf_specs(specs: Any, tree: Any, what: str) -> list[Any]:
    """One spec per leaf of ``tree``: ``specs`` is a prefix of it whose
    leaves are ``PartitionSpec`` s (``None``: replicated)."""
    spec_leaves, spec_tree = pytree.flatten(specs, is_leaf=_is_spec)
    try:
        subtrees = spec_tree.flatten_up_to(tree)
    except ValueError as e:
        raise ValueError(f"shard_map: {what} {specs!r} does not match the structure "
                         f"{pytree.tree_structure(tree)}") from e
    return [spec if spec is not None else PartitionSpec()
            for spec, sub in zip(spec_leaves, subtrees)
            for _ in range(len(pytree.tree_leaves(sub)))]


def _names(entry: Any, manual: list[str]) -> list[str]:
    """The manual mesh axes a spec entry splits its dimension over, in order."""
    if entry is None or entry is PartitionSpec.UNCONSTRAINED:
        return []
    names = list(entry) if isinstance(entry, tuple) else [entry]
    return [n for n in names if n in manual]


def _split(x: Any, spec: PartitionSpec, sizes: dict[str, int], manual: list[str]
           ) -> tuple[Any, list[str]]:
    """``x`` cut into blocks: one leading axis per mesh axis the spec names
    (in the mesh's order), then the block's dimensions.  Returns the array
    and those axis names."""
    dims = abstractify(x).dimensions
    if len(spec) > len(dims):
        raise ValueError(f"shard_map: spec {spec} has more entries than the argument's "
                         f"rank {len(dims)}")
    shape, labels = [], []          # labels: a mesh axis name, or ("block", d)
    for d, n in enumerate(dims):
        names = _names(spec[d] if d < len(spec) else None, manual)
        ways = math.prod(sizes[a] for a in names)
        if n % ways:
            raise ValueError(f"shard_map: dimension {d} of size {n} does not split into "
                             f"{ways} shards over mesh axes {names}")
        shape += [sizes[a] for a in names] + [n // ways]
        labels += names + [("block", d)]
    x = lax.reshape(x, tuple(shape))
    axes = sorted((a for a in labels if isinstance(a, str)), key=manual.index)
    order = [labels.index(a) for a in axes] + [i for i, a in enumerate(labels)
                                               if not isinstance(a, str)]
    return lax.transpose(x, tuple(order)), axes


def _merge(y: Any, spec: PartitionSpec, sizes: dict[str, int], manual: list[str]) -> Any:
    """An output with one leading axis per manual mesh axis put back together:
    axes the spec names join their dimension, the others are dropped
    (replicated: shard 0's copy)."""
    used = {a for entry in spec for a in _names(entry, manual)}
    for k in reversed(range(len(manual))):
        if manual[k] not in used:
            y = composites.index_in_dim(y, 0, k, keepdims=False)
    leading = [a for a in manual if a in used]
    block = abstractify(y).dimensions[len(leading):]
    if len(spec) > len(block):
        raise ValueError(f"shard_map: out spec {spec} has more entries than the result's "
                         f"rank {len(block)}")
    order, shape = [], []
    for d, n in enumerate(block):
        names = _names(spec[d] if d < len(spec) else None, manual)
        order += [leading.index(a) for a in names] + [len(leading) + d]
        shape.append(n * math.prod(sizes[a] for a in names))
    return lax.reshape(lax.transpose(y, tuple(order)), tuple(shape))


def shard_map(f: Callable[..., Any] | None = None, /, *, out_specs: Any,
              in_specs: Any = Infer, mesh: Any = None, axis_names: Any = frozenset(),
              check_vma: bool = True, check_rep: Any = None, auto: Any = None) -> Any:
    """JAX's ``shard_map``: ``f`` applied to each shard of its arguments (cut
    as ``in_specs`` says over ``mesh``, the current mesh if None), results
    assembled as ``out_specs`` says.  ``axis_names`` picks the mesh axes
    ``f`` maps over (all by default).  Usable as a decorator factory."""
    if f is None:
        return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                 axis_names=axis_names, check_vma=check_vma)

    @functools.wraps(f)
    def mapped(*args: Any) -> Any:
        m = mesh if mesh is not None else get_mesh()
        sizes = dict(m.shape)
        manual = [a for a in m.axis_names if not axis_names or a in axis_names]
        leaves, tree = pytree.flatten(args)
        if in_specs is Infer:
            specs = [s.spec if isinstance(s, NamedSharding) else PartitionSpec()
                     for s in map(sharding_of, leaves)]
        else:
            specs = _leaf_specs(in_specs, args, "in_specs")
        blocks, mapped_axes = zip(*[_split(x, s, sizes, manual) for x, s in zip(leaves, specs)]
                                  ) if leaves else ((), ())
        box: dict[str, Any] = {}

        def per_shard(*flat: Any) -> list[Any]:
            out = f(*tree.unflatten(flat))
            out_leaves, box["tree"] = pytree.flatten(out)
            box["out"] = out
            return out_leaves

        fn = per_shard
        for a in reversed(manual):
            fn = vmap(fn, in_axes=tuple(0 if a in names else None for names in mapped_axes),
                      out_axes=0, axis_name=a, axis_size=sizes[a])
        outs = fn(*blocks)
        out_spec_leaves = _leaf_specs(out_specs, box["out"], "out_specs")
        return box["tree"].unflatten([_merge(y, s, sizes, manual)
                                      for y, s in zip(outs, out_spec_leaves)])
    return mapped
