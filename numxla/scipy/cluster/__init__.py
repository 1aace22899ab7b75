"""``jax.scipy.cluster``: ``vq`` (vector quantisation)."""
from . import vq

__all__ = ["vq"]
