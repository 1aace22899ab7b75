"""``jacfwd`` and ``jacrev``: whole Jacobians, by ``vmap`` of ``jvp`` over the
input's basis (forward) or of the VJP function over the output's basis
(reverse).  The Jacobian of an output of shape ``O`` with respect to an input
of shape ``I`` has shape ``O + I``, as in JAX."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tracer import pytree
from tracer.core import abstractify

from .batching import vmap
from .forward import jvp
from .reverse import vjp

__all__ = ["jacfwd", "jacrev"]


def _basis(aval) -> np.ndarray:
    """The standard basis of a value's space, stacked: ``(size,) + shape``."""
    return np.eye(aval.size, dtype=aval.dtype).reshape((aval.size,) + aval.dimensions)


def _argnums(argnums: int | Sequence[int], nargs: int) -> tuple[bool, tuple[int, ...]]:
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not -nargs <= a < nargs:
            raise ValueError(f"argnums {a} is out of range for {nargs} positional arguments")
    return single, tuple(a % nargs for a in nums)


def _with(args: tuple, at: int, value: Any) -> tuple:
    return args[:at] + (value,) + args[at + 1:]


def jacfwd(fn: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian of ``fn`` with respect to array argument(s) ``argnums``, by forward mode."""
    def jacobian(*args: Any) -> Any:
        single, nums = _argnums(argnums, len(args))
        per_arg = []
        for a in nums:
            aval = abstractify(args[a])

            def push(v, a=a):
                return jvp(lambda x: fn(*_with(args, a, x)), (args[a],), (v,))[1]

            stacked = vmap(push, out_axes=-1)(_basis(aval))
            per_arg.append(pytree.tree_map(
                lambda t, aval=aval: _reshape_last(t, aval.dimensions), stacked))
        if single:
            return per_arg[0]
        return pytree.tree_map(lambda *ts: tuple(ts), *per_arg)
    return jacobian


def jacrev(fn: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """The Jacobian of ``fn`` with respect to array argument(s) ``argnums``, by reverse mode."""
    def jacobian(*args: Any) -> Any:
        single, nums = _argnums(argnums, len(args))

        def of_chosen(*chosen):
            full = args
            for a, v in zip(nums, chosen):
                full = _with(full, a, v)
            return fn(*full)

        out, vjp_fn = vjp(of_chosen, *(args[a] for a in nums))
        leaves, tree = pytree.flatten(out)
        rows = []
        for k, leaf in enumerate(leaves):
            aval = abstractify(leaf)

            def pull(u, k=k):
                cts = [u if j == k else np.zeros(abstractify(l).dimensions, abstractify(l).dtype)
                       for j, l in enumerate(leaves)]
                return vjp_fn(tree.unflatten(cts))

            per_input = vmap(pull)(_basis(aval))          # (size,) + input shape, per input
            rows.append(tuple(_reshape_first(g, aval.dimensions) for g in per_input))
        per_leaf = [r[0] if single else r for r in rows]
        return tree.unflatten(per_leaf)
    return jacobian


def _reshape_last(t: Any, in_shape: tuple[int, ...]) -> Any:
    from primitives import reshape
    aval = abstractify(t)
    return reshape(t, aval.dimensions[:-1] + in_shape)


def _reshape_first(t: Any, out_shape: tuple[int, ...]) -> Any:
    from primitives import reshape
    aval = abstractify(t)
    return reshape(t, out_shape + aval.dimensions[1:])
