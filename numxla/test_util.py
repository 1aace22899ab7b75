"""``jax.test_util``: ``check_grads`` (derivatives against finite
differences), as JAX's autodiff cookbook imports it."""
from numxla.autodiff.check import check_grads, check_jvp, check_vjp

__all__ = ["check_grads", "check_jvp", "check_vjp"]
