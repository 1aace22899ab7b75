"""``jax.scipy.sparse``: ``linalg`` (the Krylov solvers ``cg``, ``bicgstab``,
``gmres``)."""
from . import linalg

__all__ = ["linalg"]
