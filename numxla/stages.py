"""``jax.stages``: the types of ahead-of-time compilation's stages
(``jit(f).lower(...)`` is a ``Lowered``, ``.compile()`` a ``Compiled``)."""
from numxla.compile.jit import Compiled, JittedFunction as Wrapped, Lowered, Traced

__all__ = ["Traced", "Lowered", "Compiled", "Wrapped"]
