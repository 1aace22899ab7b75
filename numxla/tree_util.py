"""``jax.tree_util``: pytrees (``tracer.pytree``) under JAX's names, with
key paths (``tree_flatten_with_path``, ``tree_map_with_path``, ``keystr``)."""
from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, NamedTuple

from numxla.tracer import pytree as _pytree
from numxla.tracer.pytree import TreeDef as PyTreeDef
from numxla.tracer.pytree import register_pytree_node, tree_leaves, tree_map, tree_structure

__all__ = ["tree_map", "tree_leaves", "tree_structure", "tree_flatten", "tree_unflatten",
           "tree_reduce", "tree_all", "register_pytree_node", "register_pytree_node_class",
           "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static",
           "register_dataclass", "Partial", "PyTreeDef", "treedef_is_leaf", "treedef_children",
           "treedef_tuple", "all_leaves", "tree_transpose", "tree_broadcast",
           "tree_reduce_associative", "tree_flatten_with_path", "tree_leaves_with_path",
           "tree_map_with_path", "keystr", "DictKey", "SequenceKey", "GetAttrKey",
           "FlattenedIndexKey", "KeyEntry", "KeyPath", "flatten_one_level", "is_tree_node",
           "default_registry"]

default_registry = _pytree._registry

_IsLeaf = Callable[[Any], bool] | None


def tree_flatten(tree: Any, is_leaf: _IsLeaf = None) -> tuple[list[Any], PyTreeDef]:
    return _pytree.flatten(tree, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    return _pytree.unflatten(treedef, leaves)


_NO_INITIALIZER = object()


def tree_reduce(fn: Callable[[Any, Any], Any], tree: Any, initializer: Any = _NO_INITIALIZER,
                is_leaf: _IsLeaf = None) -> Any:
    """``fn`` folded over the leaves, starting from ``initializer`` when given
    (positionally or by name, as JAX's)."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIALIZER:
        return functools.reduce(fn, leaves)
    return functools.reduce(fn, leaves, initializer)


def tree_reduce_associative(fn: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = None, is_leaf: _IsLeaf = None) -> Any:
    leaves = tree_leaves(tree, is_leaf)
    if not leaves:
        if identity is None:
            raise TypeError("tree_reduce_associative: an empty tree needs an identity")
        return identity
    return functools.reduce(fn, leaves)


def tree_all(tree: Any, *, is_leaf: _IsLeaf = None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable: Any, is_leaf: _IsLeaf = None) -> bool:
    return all(len(tree_leaves(x, is_leaf)) == 1 and tree_leaves(x, is_leaf)[0] is x
               for x in iterable)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node_type is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_tuple(treedefs: Any) -> PyTreeDef:
    return PyTreeDef(tuple, None, tuple(treedefs))


def is_tree_node(x: Any) -> bool:
    return not treedef_is_leaf(tree_structure(x)) or x is None


def flatten_one_level(tree: Any) -> tuple[list[Any], Any]:
    """The children of ``tree``'s root and its auxiliary data."""
    if type(tree) in _pytree._registry:
        children, aux = _pytree._registry[type(tree)].to_iterable(tree)
        return list(children), aux
    if _pytree._is_namedtuple(tree):
        return list(tree), type(tree)
    raise ValueError(f"flatten_one_level: {type(tree).__name__} is a leaf")


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """An outer tree of inner trees as an inner tree of outer trees."""
    flat = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(flat[0]) if flat else tree_structure(())
    inner_leaves = [inner_treedef.flatten_up_to(x) for x in flat]
    columns = [outer_treedef.unflatten(col) for col in zip(*inner_leaves)] \
        if inner_leaves else []
    return inner_treedef.unflatten(columns)


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: _IsLeaf = None) -> Any:
    """``prefix_tree`` with each leaf repeated over the subtree of ``full_tree`` it covers."""
    leaves, treedef = tree_flatten(prefix_tree, is_leaf)
    subtrees = treedef.flatten_up_to(full_tree)
    return treedef.unflatten(tree_map(lambda _: leaf, sub) for leaf, sub in zip(leaves, subtrees))


def register_dataclass(nodetype: type | None = None, data_fields: Any = None,
                       meta_fields: Any = None, drop_fields: Any = ()) -> Any:
    """Register a class whose instances' ``data_fields`` are children and
    ``meta_fields`` static (hashed) data; a dataclass's fields default to
    data, except those with ``metadata={"static": True}``.  A decorator too."""
    if nodetype is None:
        return functools.partial(register_dataclass, data_fields=data_fields,
                                 meta_fields=meta_fields, drop_fields=drop_fields)
    if data_fields is None and meta_fields is None:
        return _pytree.register_dataclass(nodetype)
    data = tuple(data_fields or ())
    meta = tuple(meta_fields or ())

    def flatten(x: Any) -> tuple[list[Any], tuple]:
        return [getattr(x, n) for n in data], tuple((n, getattr(x, n)) for n in meta)

    def unflatten(aux: tuple, children: Any) -> Any:
        kwargs = dict(zip(data, children))
        kwargs.update(aux)
        return nodetype(**kwargs)
    register_pytree_node(nodetype, flatten, unflatten)
    _key_flatteners[nodetype] = lambda x: ([(GetAttrKey(n), getattr(x, n)) for n in data],
                                           flatten(x)[1])
    return nodetype


def register_pytree_node_class(cls: type) -> type:
    """A class decorator: ``tree_flatten()`` / ``tree_unflatten(aux, children)``."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


_key_flatteners: dict[type, Callable[[Any], tuple[Any, Any]]] = {}


def register_pytree_with_keys(cls: type, flatten_with_keys: Callable[[Any], tuple[Any, Any]],
                              unflatten_func: Callable[[Any, Any], Any],
                              flatten_func: Callable[[Any], tuple[Any, Any]] | None = None
                              ) -> None:
    """Register ``cls`` with ``flatten_with_keys(x) -> ([(key, child)...], aux)``."""
    def plain(x: Any) -> tuple[Any, Any]:
        pairs, aux = flatten_with_keys(x)
        return [c for _, c in pairs], aux
    register_pytree_node(cls, flatten_func or plain, unflatten_func)
    _key_flatteners[cls] = flatten_with_keys


def register_pytree_with_keys_class(cls: type) -> type:
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              lambda x: x.tree_flatten())
    return cls


def register_static(cls: type) -> type:
    """A class whose instances are pytree nodes with no children (hashable aux data)."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its bound arguments are leaves."""


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))


# -- key paths ---------------------------------------------------------------------------------

class DictKey(NamedTuple):
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class SequenceKey(NamedTuple):
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


class GetAttrKey(NamedTuple):
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


class FlattenedIndexKey(NamedTuple):
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyEntry = Any
KeyPath = tuple


def _children_with_keys(x: Any) -> list[tuple[Any, Any]] | None:
    """``[(key, child)...]`` of a node, None for a leaf."""
    t = type(x)
    if t in _key_flatteners:
        return list(_key_flatteners[t](x)[0])
    if isinstance(x, dict) and t in _pytree._registry:
        return [(DictKey(k), x[k]) for k in sorted(x, key=_pytree._sort_key)]
    if t in (list, tuple):
        return [(SequenceKey(i), c) for i, c in enumerate(x)]
    if t is type(None):
        return []
    node = _pytree._registry.get(t)
    if node is None:
        if _pytree._is_namedtuple(x):
            return [(GetAttrKey(n), c) for n, c in zip(t._fields, x)]
        return None
    children = list(node.to_iterable(x)[0])
    if dataclasses.is_dataclass(x):
        names = [f.name for f in dataclasses.fields(x) if not f.metadata.get("static", False)]
        if len(names) == len(children):
            return [(GetAttrKey(n), c) for n, c in zip(names, children)]
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)]


def _with_path(x: Any, path: tuple, out: list, is_leaf: _IsLeaf) -> None:
    kids = None if is_leaf is not None and is_leaf(x) else _children_with_keys(x)
    if kids is None:
        out.append((path, x))
        return
    for key, child in kids:
        _with_path(child, path + (key,), out, is_leaf)


def tree_flatten_with_path(tree: Any, is_leaf: _IsLeaf = None
                           ) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
    """``([(key_path, leaf)...], treedef)``: each leaf with the keys that reach it."""
    out: list = []
    _with_path(tree, (), out, is_leaf)
    return out, tree_structure(tree, is_leaf)


def tree_leaves_with_path(tree: Any, is_leaf: _IsLeaf = None) -> list[tuple[tuple, Any]]:
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(fn: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: _IsLeaf = None) -> Any:
    """``fn(key_path, leaf, *other_leaves)`` for every leaf."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten(fn(p, x, *xs) for (p, x), *xs in zip(pairs, *others))


def keystr(keys: tuple, *, simple: bool = False, separator: str = "") -> str:
    """A key path as text: ``['a'][0].w`` (``simple``: ``a/0/w`` with ``separator='/'``)."""
    if not simple:
        return "".join(str(k) for k in keys)
    return separator.join(str(next(iter(k))) if isinstance(k, tuple) else str(k) for k in keys)
