"""``jax.tree``: ``map``, ``leaves``, ``structure``, ``flatten``, ``unflatten``, ``reduce``, ``all``."""
from .tree_util import tree_all as all  # noqa: A001
from .tree_util import tree_flatten as flatten
from .tree_util import tree_leaves as leaves
from .tree_util import tree_map as map  # noqa: A001
from .tree_util import tree_reduce as reduce  # noqa: A001
from .tree_util import tree_structure as structure
from .tree_util import tree_unflatten as unflatten

__all__ = ["map", "leaves", "structure", "flatten", "unflatten", "reduce", "all"]
