"""``jax.tree``: the short names of ``jax.tree_util``'s functions."""
from .tree_util import tree_all as all  # noqa: A001
from .tree_util import tree_broadcast as broadcast
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A001
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce  # noqa: A001
from .tree_util import tree_reduce_associative as reduce_associative
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as _tree_transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all", "transpose",
           "broadcast", "flatten_with_path", "leaves_with_path", "map_with_path",
           "reduce_associative"]


def transpose(outer_treedef, inner_treedef, pytree_to_transpose):
    return _tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)
