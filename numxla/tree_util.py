"""``jax.tree_util``: pytrees (``tracer.pytree``) under JAX's names."""
from __future__ import annotations

import functools
from typing import Any, Callable

from numxla.tracer import pytree as _pytree
from numxla.tracer.pytree import TreeDef as PyTreeDef
from numxla.tracer.pytree import register_dataclass, register_pytree_node, tree_leaves, tree_map, \
    tree_structure

__all__ = ["tree_map", "tree_leaves", "tree_structure", "tree_flatten", "tree_unflatten",
           "tree_reduce", "tree_all", "register_pytree_node", "register_pytree_node_class",
           "register_dataclass", "Partial", "PyTreeDef", "treedef_is_leaf", "all_leaves"]


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    return _pytree.flatten(tree, is_leaf)


def tree_unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    return _pytree.unflatten(treedef, leaves)


def tree_reduce(fn: Callable[[Any, Any], Any], tree: Any, *initializer: Any) -> Any:
    return functools.reduce(fn, tree_leaves(tree), *initializer)


def tree_all(tree: Any) -> bool:
    return all(tree_leaves(tree))


def all_leaves(iterable: Any) -> bool:
    return all(len(tree_leaves(x)) == 1 and tree_leaves(x)[0] is x for x in iterable)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef == tree_structure(0)


def register_pytree_node_class(cls: type) -> type:
    """A class decorator: ``tree_flatten()`` / ``tree_unflatten(aux, children)``."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


class Partial(functools.partial):
    """A ``functools.partial`` that is a pytree: its bound arguments are leaves."""


register_pytree_node(Partial, lambda p: ((p.args, p.keywords), p.func),
                     lambda func, children: Partial(func, *children[0], **children[1]))
