"""Tracing a Python function with abstract inputs into a ``Graph``.

``make_graph(f)(*args)`` is the user-facing entry: ``args`` may be concrete
arrays, ``Shape`` s (``parse_shape("f32[3,5]{0,1}")``), abstract values or
anything with ``.shape`` and ``.dtype``; only their abstract value is used.
``compile.jit`` and ``autodiff`` trace through :func:`trace_pytree`.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Iterable, NamedTuple, Sequence

from . import pytree
from .core import AbstractValue, abstractify, set_interpreter
from .graph import Graph, GraphBuilder
from .shapes import PrimitiveType, Shape

__all__ = ["make_graph", "trace_pytree", "ShapeDtypeStruct", "split_static",
           "Signature"]


@dataclasses.dataclass(frozen=True)
class ShapeDtypeStruct:
    """An abstract argument, as in JAX: ``ShapeDtypeStruct((3, 5), np.float32)``."""

    shape: tuple[int, ...]
    dtype: Any

    def __numxla_aval__(self) -> AbstractValue:
        return AbstractValue(Shape(PrimitiveType.from_dtype(self.dtype), tuple(self.shape)))


def _normalize_argnums(argnums: int | Iterable[int] | None, nargs: int) -> tuple[int, ...]:
    if argnums is None:
        return ()
    if isinstance(argnums, int):
        argnums = (argnums,)
    # a static parameter beyond the positional arguments given is passed by
    # keyword (static_argnames covers it) or defaulted, as in JAX
    return tuple(sorted({a % nargs for a in argnums if -nargs <= a < nargs}))


def split_static(args: tuple, kwargs: dict, static_argnums, static_argnames
                 ) -> tuple[tuple, dict, tuple[tuple[int, Any], ...], tuple[tuple[str, Any], ...]]:
    """Separate static arguments (which key the cache) from traced ones."""
    nums = _normalize_argnums(static_argnums, len(args))
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames or ())
    static_pos = tuple((i, args[i]) for i in nums)
    static_kw = tuple(sorted((k, kwargs[k]) for k in names if k in kwargs))
    for where, value in list(static_pos) + list(static_kw):
        try:
            hash(value)
        except TypeError:
            raise TypeError(f"static argument {where!r} must be hashable, got "
                            f"{type(value).__name__}") from None
    dyn_args = tuple(a for i, a in enumerate(args) if i not in nums)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names}
    return dyn_args, dyn_kwargs, static_pos, static_kw


class Signature(NamedTuple):
    """What a traced graph depends on: the cache key of ``jit``."""

    in_tree: pytree.TreeDef
    in_avals: tuple[AbstractValue, ...]
    static_args: tuple[tuple[int, Any], ...]
    static_kwargs: tuple[tuple[str, Any], ...]


def _argument_names(fn: Callable, args: tuple, kwargs: dict, static_pos) -> list[str]:
    """A readable path for every traced leaf, from ``fn``'s parameter names."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    static_idx = {i for i, _ in static_pos}
    positions = [i for i in range(len(args) + len(static_idx)) if i not in static_idx]
    names = []
    for i, a in zip(positions, args):
        root = params[i] if i < len(params) else f"args[{i}]"
        names.extend(pytree.leaf_paths(a, root))
    for k in sorted(kwargs):
        names.extend(pytree.leaf_paths(kwargs[k], k))
    return names


def trace_pytree(fn: Callable, args: tuple, kwargs: dict | None = None, *,
                 static_argnums=None, static_argnames=None,
                 name: str | None = None) -> tuple[Graph, Signature]:
    """Trace ``fn(*args, **kwargs)`` into a graph over the flattened leaves.

    Returns the graph (with ``in_tree``/``out_tree``) and the signature it
    was traced for.
    """
    kwargs = kwargs or {}
    dyn_args, dyn_kwargs, static_pos, static_kw = split_static(
        args, kwargs, static_argnums, static_argnames)
    leaves, in_tree = pytree.flatten((dyn_args, dyn_kwargs))
    in_avals = tuple(abstractify(x) for x in leaves)
    signature = Signature(in_tree, in_avals, static_pos, static_kw)
    hints = _argument_names(fn, dyn_args, dyn_kwargs, static_pos)
    graph = trace_with_signature(fn, signature, name=name or getattr(fn, "__name__", "main"),
                                 hints=hints)
    return graph, signature


def trace_with_signature(fn: Callable, signature: Signature, *, name: str,
                         hints: Sequence[str] | None = None) -> Graph:
    """Trace ``fn`` for one abstract signature."""
    builder = GraphBuilder(name=_sanitize_name(name))
    hints = list(hints or [])
    hints += [""] * (len(signature.in_avals) - len(hints))
    tracers = [builder.new_input(av, h) for av, h in zip(signature.in_avals, hints)]
    dyn_args, dyn_kwargs = signature.in_tree.unflatten(tracers)
    call_args = _merge_static(dyn_args, signature.static_args)
    call_kwargs = dict(dyn_kwargs, **dict(signature.static_kwargs))
    try:
        with set_interpreter(builder):
            out = fn(*call_args, **call_kwargs)
        out_leaves, out_tree = pytree.flatten(out)
        graph = builder.build(out_leaves, in_tree=signature.in_tree, out_tree=out_tree)
    finally:
        builder.active = False
    if builder.captured:
        raise TypeError(f"{name} closes over {len(builder.captured)} traced value(s) of an "
                        f"enclosing trace ({builder.captured[0].describe_origin()}); "
                        f"pass them as arguments instead")
    return graph


def _merge_static(dyn_args: tuple, static_pos: tuple[tuple[int, Any], ...]) -> list[Any]:
    out = list(dyn_args)
    for i, value in static_pos:
        out.insert(i, value)
    return out


def _sanitize_name(name: str) -> str:
    name = name.strip("<>")  # "<lambda>" -> "lambda"
    return "".join(c if c.isalnum() or c in "_." else "_" for c in name) or "main"


def make_graph(fn: Callable, *, static_argnums: int | Sequence[int] | None = None,
               static_argnames: str | Sequence[str] | None = None) -> Callable[..., Graph]:
    """``make_graph(f)(*args, **kwargs)`` traces ``f`` and returns its ``Graph``.

    Print the result (``print(make_graph(f)(x))``) for the HLO-like text.
    """
    @functools.wraps(fn)
    def traced(*args: Any, **kwargs: Any) -> Graph:
        graph, _ = trace_pytree(fn, args, kwargs, static_argnums=static_argnums,
                                static_argnames=static_argnames)
        return graph
    return traced
