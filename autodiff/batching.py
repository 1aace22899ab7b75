"""Batching: ``vmap``.

A :class:`BatchInterpreter` carries, for each value that depends on a mapped
input, the batched array and the dimension its batch lives in.  Every
``bind`` on such a value runs the primitive's batching rule
(``rules.batch_rules``) on the parent interpreter: the rule rewrites the op
to work on the whole batch at once (an element-wise op on the batched
arrays, a ``dot_general`` with one more batch dimension, ...).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from numxla.tracer import pytree
from numxla.tracer.core import Interpreter, Primitive, Tracer, abstractify, array_value, \
    current_interpreter, set_interpreter

from .rules import batch_rules, move_batch_dim

__all__ = ["vmap", "vmap_flat", "batch_flat", "BatchInterpreter", "BatchTracer"]


class BatchTracer(Tracer):
    """A batched value seen by the function as one unbatched element."""

    __slots__ = ("_interpreter", "value", "dim", "_aval")

    def __init__(self, interpreter: "BatchInterpreter", value: Any, dim: int):
        self._interpreter = interpreter
        self.value = value
        self.dim = dim
        full = abstractify(value)
        dims = full.dimensions[:dim] + full.dimensions[dim + 1:]
        self._aval = array_value(full.element_type, dims, full.weak_type)

    @property
    def aval(self):  # type: ignore[override]
        return self._aval

    def describe_origin(self) -> str:
        return "a value mapped over by vmap"

    def __repr__(self) -> str:  # as JAX prints a value traced by vmap
        return f"VmapTracer(aval={self._aval.jax_text()}, " \
               f"batched={abstractify(self.value).jax_text()})"


class BatchInterpreter(Interpreter):
    def __init__(self, size: int, parent: Interpreter | None = None):
        self.parent = parent if parent is not None else current_interpreter()
        self.size = size
        self.active = True

    def lift(self, x: Any) -> tuple[Any, int | None]:
        if isinstance(x, BatchTracer) and x._interpreter is self:
            return x.value, x.dim
        return x, None

    def interpret(self, primitive: Primitive, args: tuple, params: dict) -> Any:
        pairs = [self.lift(a) for a in args]
        values = tuple(v for v, _ in pairs)
        dims = tuple(d for _, d in pairs)
        with set_interpreter(self.parent):
            if all(d is None for d in dims):
                return primitive.bind(*values, **params)
            rule = batch_rules.get(primitive)
            if rule is None:
                raise NotImplementedError(f"{primitive.name}: no batching rule (vmap of "
                                          f"{primitive.name} is not defined)")
            outs, out_dims = rule(values, dims, **params)
        if primitive.multiple_results:
            return tuple(self.wrap(o, d) for o, d in zip(outs, out_dims))
        return self.wrap(outs, out_dims)

    def wrap(self, value: Any, dim: int | None) -> Any:
        if dim is None:
            return value
        aval = abstractify(value)
        if not 0 <= dim < aval.ndim or aval.dimensions[dim] != self.size:
            raise AssertionError(f"a batching rule put the batch of size {self.size} at "
                                 f"dimension {dim} of {aval.shape}")
        return BatchTracer(self, value, dim)


def batch_flat(fn: Callable[..., Sequence[Any]], args: Sequence[Any],
               dims: Sequence[int | None], size: int, axis_name: Any = None
               ) -> tuple[list[Any], list[int | None]]:
    """``fn`` run batched on flat ``args`` (batched at ``dims``, ``None``: not
    batched) by the current interpreter: its results and where their batch
    dimensions are (``None`` for results that do not depend on the batch).
    ``axis_name`` names the batch axis for collectives (``named_axes``)."""
    from .named_axes import axis_bound
    interp = BatchInterpreter(size)
    tracers = [a if d is None else BatchTracer(interp, a, d) for a, d in zip(args, dims)]
    try:
        with set_interpreter(interp), axis_bound(axis_name, interp):
            outs = list(fn(*tracers))
    finally:
        interp.active = False
    lifted = [interp.lift(o) for o in outs]
    return [v for v, _ in lifted], [d for _, d in lifted]


def vmap_flat(fn: Callable[..., Sequence[Any]], args: Sequence[Any],
              in_dims: Sequence[int | None], out_dims: Any, size: int,
              axis_name: Any = None) -> list[Any]:
    """``fn`` mapped over flat ``args`` (batched at ``in_dims``); results
    batched at ``out_dims``: an int, ``None`` (results must not depend on the
    batch), a list with one entry per result, or a callable giving that list
    once ``fn`` has run."""
    outs, dims = batch_flat(fn, args, in_dims, size, axis_name)
    if callable(out_dims):
        out_dims = out_dims()
    if not isinstance(out_dims, (list, tuple)):
        out_dims = [out_dims] * len(outs)
    results = []
    for value, dim, od in zip(outs, dims, out_dims):
        if od is None:
            if dim is not None:
                raise ValueError("vmap: out_axes=None for an output that depends on the mapped "
                                 "inputs")
            results.append(value)
            continue
        rank = abstractify(value).ndim + (1 if dim is None else 0)
        if not -rank <= od < rank:
            raise ValueError(f"vmap: out_axes {od} is out of range for a result of rank {rank}")
        results.append(move_batch_dim(value, dim, od % rank, size))
    return results


def vmap(fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_name: Any = None, axis_size: int | None = None,
         spmd_axis_name: Any = None) -> Callable[..., Any]:
    """JAX's ``vmap``: ``fn`` mapped over axis ``in_axes`` of its arguments
    (an int, ``None``, or a tuple with a prefix pytree per positional
    argument), results stacked at ``out_axes``.  Keyword arguments are
    mapped over their leading axis, as JAX's.  ``axis_name`` names the
    mapped axis for collectives inside ``fn`` (``lax.psum(x, name)``...)."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    def mapped(*args: Any, **kwargs: Any) -> Any:
        leaves, tree = pytree.flatten((args, kwargs))
        n_kwargs = len(pytree.tree_leaves(kwargs))
        if in_axes is None or isinstance(in_axes, int):
            dims = [in_axes] * (len(leaves) - n_kwargs)
        else:
            axes = tuple(in_axes)
            if len(axes) != len(args):
                raise ValueError(f"vmap: in_axes has {len(axes)} entries for {len(args)} "
                                 f"positional arguments")
            dims = pytree.axes_for_leaves(axes, args, "vmap", "in_axes")
        dims = list(dims) + [0] * n_kwargs
        canon: list[int | None] = []
        sizes = set()
        for x, d in zip(leaves, dims):
            if d is None:
                canon.append(None)
                continue
            aval = abstractify(x)
            if not -aval.ndim <= d < aval.ndim:
                raise ValueError(f"vmap: in_axes {d} is out of range for an argument of shape "
                                 f"{aval.dimensions}")
            canon.append(d % aval.ndim)
            sizes.add(aval.dimensions[d % aval.ndim])
        if axis_size is not None:
            sizes.add(int(axis_size))
        if len(sizes) != 1:
            raise ValueError(f"vmap: the mapped axes have different sizes {sorted(sizes)}"
                             if sizes else "vmap: no argument is mapped; give axis_size")
        box: dict[str, Any] = {}

        def flat_fn(*flat):
            call_args, call_kwargs = tree.unflatten(flat)
            box["out"] = fn(*call_args, **call_kwargs)
            out_leaves, box["tree"] = pytree.flatten(box["out"])
            return out_leaves

        outs = vmap_flat(flat_fn, leaves, canon,
                         lambda: pytree.axes_for_leaves(out_axes, box["out"], "vmap", "out_axes"),
                         sizes.pop(), axis_name)
        return box["tree"].unflatten(outs)

    mapped.__name__ = f"vmap_{getattr(fn, '__name__', 'fn')}"
    mapped.__wrapped__ = fn
    return mapped
