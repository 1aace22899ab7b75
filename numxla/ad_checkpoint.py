"""``jax.ad_checkpoint``: rematerialisation (``checkpoint``) and the names
and policies JAX's "Gradient checkpointing" page uses with it.

numxla's ``checkpoint`` recomputes everything inside it in the backward
pass whatever the policy, so names (``checkpoint_name``) only label values
and ``print_saved_residuals`` lists the inputs, which is what a
recompute-everything policy saves."""
from __future__ import annotations

from typing import Any, Callable

from numxla.autodiff.custom import checkpoint, remat
from numxla.tracer import pytree
from numxla.tracer.core import abstractify

from ._api import checkpoint_policies

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies",
           "print_saved_residuals"]


def checkpoint_name(x: Any, name: str) -> Any:
    """``x`` itself, named for a policy (``save_only_these_names``...)."""
    return x


def print_saved_residuals(f: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Print what ``checkpoint(f)`` keeps for the backward pass: its array
    arguments (numxla recomputes every intermediate)."""
    for leaf in pytree.tree_leaves((args, kwargs)):
        aval = abstractify(leaf)
        print(f"{aval.element_type.short_name}{list(aval.dimensions)} from an argument")
