"""``jax.scipy.spatial``: ``transform`` (``Rotation``, ``Slerp``)."""
from . import transform

__all__ = ["transform"]
