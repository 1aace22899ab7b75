"""Pytrees: nested containers whose leaves are arrays.

A function traced by numxla takes and returns pytrees: tuples, lists, dicts
(keys sorted, as JAX does), ``None`` (a node with no children), namedtuples,
and any class registered with :func:`register_pytree_node` or
:func:`register_dataclass`.  Everything else is a leaf.

``flatten(tree) -> (leaves, treedef)`` and ``treedef.unflatten(leaves)`` are
the two operations every transform uses; ``TreeDef`` is hashable so that it
can be part of a compile-cache key.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Hashable, Iterable, NamedTuple

__all__ = [
    "TreeDef", "flatten", "unflatten", "tree_map", "tree_leaves",
    "tree_structure", "register_pytree_node", "register_dataclass",
    "leaf_paths", "axes_for_leaves",
]


class _NodeType(NamedTuple):
    to_iterable: Callable[[Any], tuple[Iterable[Any], Hashable]]
    from_iterable: Callable[[Hashable, Iterable[Any]], Any]


_registry: dict[type, _NodeType] = {}


def register_pytree_node(
    cls: type,
    flatten_fn: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten_fn: Callable[[Hashable, Iterable[Any]], Any],
) -> None:
    """Register ``cls`` as a pytree node.

    ``flatten_fn(x) -> (children, aux_data)``, ``aux_data`` hashable;
    ``unflatten_fn(aux_data, children) -> x``.
    """
    _registry[cls] = _NodeType(flatten_fn, unflatten_fn)


def register_dataclass(cls: type) -> type:
    """Register a dataclass as a pytree node whose children are its fields.

    Usable as a decorator.  Fields with ``metadata={"static": True}`` are
    kept in the tree definition (hashed) rather than treated as children.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"register_dataclass: {cls.__name__} is not a dataclass")
    fields = dataclasses.fields(cls)
    dynamic = tuple(f.name for f in fields if not f.metadata.get("static", False))
    static = tuple(f.name for f in fields if f.metadata.get("static", False))

    def flatten_fn(x):
        return ([getattr(x, n) for n in dynamic],
                tuple((n, getattr(x, n)) for n in static))

    def unflatten_fn(aux, children):
        kwargs = dict(zip(dynamic, children))
        kwargs.update(aux)
        return cls(**kwargs)

    register_pytree_node(cls, flatten_fn, unflatten_fn)
    return cls


def _is_namedtuple(x: Any) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _dict_flatten(d: dict):
    keys = sorted(d.keys(), key=_sort_key)
    return [d[k] for k in keys], tuple(keys)


def _sort_key(k: Any):
    return (type(k).__name__, k)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(dict, _dict_flatten, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(type(None), lambda _: ((), None), lambda _a, _c: None)


class TreeDef:
    """The structure of a pytree with its leaves removed (hashable; its hash
    is computed once, since it keys ``jit``'s cache on every call)."""

    __slots__ = ("node_type", "aux_data", "subtrees", "_hash")

    def __init__(self, node_type: type | None, aux_data: Hashable = None,
                 children: tuple["TreeDef", ...] = ()):
        self.node_type = node_type  # None marks a leaf
        self.aux_data = aux_data
        self.subtrees = children  # the children's structures (``children()`` lists them)
        self._hash = hash((node_type, aux_data, children))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return self is other or (
            isinstance(other, TreeDef) and self._hash == other._hash
            and self.node_type == other.node_type and self.aux_data == other.aux_data
            and self.subtrees == other.subtrees)

    @property
    def num_leaves(self) -> int:
        if self.node_type is None:
            return 1
        return sum(c.num_leaves for c in self.subtrees)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        it = iter(leaves)
        out = self._build(it)
        rest = list(it)
        if rest:
            raise ValueError(f"unflatten: {len(rest)} leaves left over for tree {self}")
        return out

    def _build(self, it):
        if self.node_type is None:
            try:
                return next(it)
            except StopIteration:
                raise ValueError(f"unflatten: too few leaves for tree {self}") from None
        kids = [c._build(it) for c in self.subtrees]
        if self.node_type is _NAMEDTUPLE:
            cls = self.aux_data
            return cls(*kids)
        return _registry[self.node_type].from_iterable(self.aux_data, kids)

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.subtrees)

    def children(self) -> list["TreeDef"]:
        """The structures of the root's children (JAX's ``PyTreeDef.children()``)."""
        return list(self.subtrees)

    children_treedefs = children

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` at this structure's leaves."""
        if self.node_type is None:
            return [tree]
        if self.node_type is _NAMEDTUPLE:
            kids, aux = list(tree), type(tree)
        elif type(tree) is not self.node_type:
            raise ValueError(f"flatten_up_to: {type(tree).__name__} where {self} has a node")
        else:
            kids, aux = _registry[self.node_type].to_iterable(tree)
            kids = list(kids)
        if aux != self.aux_data or len(kids) != len(self.subtrees):
            raise ValueError(f"flatten_up_to: {tree!r:.80} does not match {self}")
        return [x for c, k in zip(self.subtrees, kids) for x in c.flatten_up_to(k)]

    def _text(self) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(c._text() for c in self.subtrees)
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.subtrees) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c._text()}"
                                   for k, c in zip(self.aux_data, self.subtrees)) + "}"
        if self.node_type is type(None):
            return "None"
        if self.node_type is _NAMEDTUPLE:
            return f"CustomNode(namedtuple[{self.aux_data.__name__}], [{inner}])"
        return f"CustomNode({self.node_type.__name__}[{self.aux_data}], [{inner}])"

    def __str__(self) -> str:  # JAX's spelling: PyTreeDef({'a': *, 'b': (*, *)})
        return f"PyTreeDef({self._text()})"

    __repr__ = __str__


class _NamedTupleMarker:
    pass


_NAMEDTUPLE = _NamedTupleMarker
_LEAF = TreeDef(None)


def flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], TreeDef]:
    """Flatten ``tree`` into its leaves (left to right) and its structure."""
    leaves: list[Any] = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(x: Any, leaves: list, is_leaf) -> TreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    t = type(x)
    if t is tuple or t is list:  # the common containers, without the registry
        return TreeDef(t, None, tuple([_flatten(c, leaves, is_leaf) for c in x]))
    node = _registry.get(t)
    if node is None:
        if _is_namedtuple(x):
            kids = tuple(_flatten(c, leaves, is_leaf) for c in x)
            return TreeDef(_NAMEDTUPLE, type(x), kids)
        leaves.append(x)
        return _LEAF
    children, aux = node.to_iterable(x)
    return TreeDef(t, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))


def unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeDef:
    return flatten(tree, is_leaf)[1]


def tree_map(fn: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``fn`` leafwise; ``rest`` trees must have ``tree``'s structure,
    or have it as a prefix (JAX's rule: their subtrees at ``tree``'s leaves
    are passed whole)."""
    leaves, treedef = flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = flatten(r, is_leaf)
        if r_def != treedef:
            try:
                r_leaves = treedef.flatten_up_to(r)
            except (ValueError, KeyError, TypeError):
                raise ValueError(f"tree_map: structures differ: {treedef} vs {r_def}") from None
        others.append(r_leaves)
    return treedef.unflatten(fn(*xs) for xs in zip(leaves, *others))


def leaf_paths(tree: Any, root: str = "") -> list[str]:
    """A readable access path for every leaf, e.g. ``params['w'][0]``.

    Used in error messages that must name the argument at fault.
    """
    paths: list[str] = []
    _paths(tree, root, paths)
    return paths


def _paths(x: Any, prefix: str, out: list[str]) -> None:
    if _is_namedtuple(x) and type(x) not in _registry:
        for name, c in zip(type(x)._fields, x):
            _paths(c, f"{prefix}.{name}", out)
        return
    node = _registry.get(type(x))
    if node is None:
        out.append(prefix)
        return
    if isinstance(x, dict):
        for k in sorted(x.keys(), key=_sort_key):
            _paths(x[k], f"{prefix}[{k!r}]", out)
        return
    if isinstance(x, (tuple, list)):
        for i, c in enumerate(x):
            _paths(c, f"{prefix}[{i}]", out)
        return
    if dataclasses.is_dataclass(x):
        children, _ = node.to_iterable(x)
        names = [f.name for f in dataclasses.fields(x) if not f.metadata.get("static", False)]
        for name, c in zip(names, children):
            _paths(c, f"{prefix}.{name}", out)
        return
    children, _ = node.to_iterable(x)
    for i, c in enumerate(children):
        _paths(c, f"{prefix}<{i}>", out)


def axes_for_leaves(axes: Any, tree: Any, op: str, what: str) -> list[Any]:
    """An ``in_axes``/``out_axes`` prefix tree (an int or None for a whole
    subtree, else a tuple/list/dict matching ``tree`` down to there) as one
    entry per leaf of ``tree``, in leaf order (``vmap``, ``pmap``)."""
    if axes is None or isinstance(axes, int):
        return [axes] * len(tree_leaves(tree))
    if isinstance(axes, (list, tuple)) and isinstance(tree, (list, tuple)) \
            and not _is_namedtuple(tree) and len(axes) == len(tree):
        return [d for a, t in zip(axes, tree) for d in axes_for_leaves(a, t, op, what)]
    if isinstance(axes, dict) and isinstance(tree, dict) and set(axes) == set(tree):
        return [d for k in sorted(tree, key=_sort_key)
                for d in axes_for_leaves(axes[k], tree[k], op, what)]
    raise ValueError(f"{op}: {what}={axes!r} does not match the structure of the values "
                     f"({tree_structure(tree)})")
