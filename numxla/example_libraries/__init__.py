"""``jax.example_libraries`` for numxla: ``optimizers`` and ``stax``, the small
optimizer and neural-network libraries JAX's own examples are written with
(``from jax.example_libraries import optimizers, stax``), with their API and
their arithmetic, over ``numxla.numpy``, ``numxla.random`` and ``numxla.lax``."""
from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
