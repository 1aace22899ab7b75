"""``jax.custom_derivatives``: the custom differentiation API under its
module name (``from jax.custom_derivatives import custom_jvp``)."""
from numxla.autodiff.custom import custom_jvp, custom_vjp

from ._api import closure_convert, custom_gradient

__all__ = ["custom_jvp", "custom_vjp", "custom_gradient", "closure_convert"]
