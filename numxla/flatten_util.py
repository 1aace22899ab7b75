"""``jax.flatten_util``: ``ravel_pytree``, a pytree of arrays as one 1-D array
(leaves promoted to one dtype) and the function that puts it back."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import numxla.primitives.numpy as jnp
from numxla.tree_util import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(flat, unravel)``: the leaves' elements concatenated in leaf order
    (dtype: the leaves' promoted dtype; f32 and empty for no leaves), and
    ``unravel(flat)`` giving the pytree back (each leaf in its own dtype)."""
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return jnp.zeros((0,), jnp.float32), lambda _: tree_unflatten(treedef, [])
    from_dtypes = [jnp.result_type(x) for x in leaves]
    to_dtype = jnp.result_type(*from_dtypes)
    sizes = [int(np.size(x)) for x in leaves]
    shapes = [tuple(np.shape(x)) for x in leaves]
    flat = jnp.concatenate([jnp.ravel(jnp.asarray(x, to_dtype)) for x in leaves])

    def unravel(arr: Any) -> Any:
        if jnp.result_type(arr) != to_dtype:
            raise TypeError(f"unravel function given array of dtype {jnp.result_type(arr)}, "
                            f"but expected dtype {to_dtype}")
        chunks, start = [], 0
        for size, shape, dtype in zip(sizes, shapes, from_dtypes):
            chunk = jnp.reshape(arr[start:start + size], shape)
            chunks.append(chunk if dtype == to_dtype else chunk.astype(dtype))
            start += size
        return tree_unflatten(treedef, chunks)
    return flat, unravel
