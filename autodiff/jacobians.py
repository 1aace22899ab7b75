"""``jacfwd`` and ``jacrev``: whole Jacobians, by ``vmap`` of ``jvp`` over the
input's basis (forward) or of the VJP function over the output's basis
(reverse).  The Jacobian of an output of shape ``O`` with respect to an input
of shape ``I`` has shape ``O + I``, as in JAX."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import abstractify

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


def _flat_problem(fn: Callable[..., Any], args: tuple, argnums: int | Sequence[int]):
    """``fn`` as a function of the leaves of the chosen arguments (pytrees),
    those leaves, their tree (a tuple of the chosen arguments), and whether
    one argument was chosen."""
    single, nums = _argnums(argnums, len(args))
    leaves, in_tree = pytree.flatten(tuple(args[a] for a in nums))

    def of_leaves(*values):
        full = args
        for a, chosen in zip(nums, in_tree.unflatten(values)):
            full = _with(full, a, chosen)
        return fn(*full)
    return of_leaves, leaves, in_tree, single


def _assemble(blocks: list[list[Any]], out_tree: pytree.TreeDef, in_tree: pytree.TreeDef,
              single: bool) -> Any:
    """``blocks[o][i]``, the Jacobian of output leaf ``o`` by input leaf ``i``,
    as JAX nests them: the output's structure outside, the input's inside."""
    def per_output(row):
        chosen = in_tree.unflatten(row)
        return chosen[0] if single else chosen
    return out_tree.unflatten([per_output(row) for row in blocks])


def _aux_jacobian(jac: Callable[..., Any], fn: Callable[..., Any],
                  argnums: int | Sequence[int]) -> Callable[..., Any]:
    """``has_aux``: ``fn`` returns ``(out, aux)``; the result is ``(jacobian of
    out, aux)``, aux from a plain call of ``fn`` (no transform sees it)."""
    def jacobian(*args: Any) -> Any:
        return jac(lambda *a: fn(*a)[0], argnums)(*args), fn(*args)[1]
    return jacobian


def jacfwd(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fn`` with respect to argument(s) ``argnums`` (arrays
    or pytrees of them), by forward mode: one ``jvp`` per input basis
    vector, batched by ``vmap``."""
    if has_aux:
        return _aux_jacobian(jacfwd, fn, argnums)
    def jacobian(*args: Any) -> Any:
        of_leaves, leaves, in_tree, single = _flat_problem(fn, args, argnums)
        columns, out_tree = [], None
        for j, leaf in enumerate(leaves):
            aval = abstractify(leaf)

            def push(v, j=j):
                tangents = tuple(v if k == j else np.zeros(abstractify(x).dimensions,
                                                           abstractify(x).dtype)
                                 for k, x in enumerate(leaves))
                return jvp(of_leaves, tuple(leaves), tangents)[1]

            stacked = vmap(push, out_axes=-1)(_basis(aval))
            out_leaves, out_tree = pytree.flatten(stacked)
            columns.append([_reshape_last(t, aval.dimensions) for t in out_leaves])
        blocks = [[column[o] for column in columns] for o in range(out_tree.num_leaves)]
        return _assemble(blocks, out_tree, in_tree, single)
    return jacobian


def jacrev(fn: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``fn`` with respect to argument(s) ``argnums`` (arrays
    or pytrees of them), by reverse mode: one VJP per output basis vector,
    batched by ``vmap``."""
    if has_aux:
        return _aux_jacobian(jacrev, fn, argnums)
    def jacobian(*args: Any) -> Any:
        of_leaves, leaves, in_tree, single = _flat_problem(fn, args, argnums)
        out, vjp_fn = vjp(of_leaves, *leaves)
        out_leaves, out_tree = pytree.flatten(out)
        blocks = []
        for k, leaf in enumerate(out_leaves):
            aval = abstractify(leaf)

            def pull(u, k=k):
                cts = [u if j == k else np.zeros(abstractify(x).dimensions, abstractify(x).dtype)
                       for j, x in enumerate(out_leaves)]
                return vjp_fn(out_tree.unflatten(cts))

            per_input = vmap(pull)(_basis(aval))          # (size,) + input shape, per input
            blocks.append([_reshape_first(g, aval.dimensions) for g in per_input])
        return _assemble(blocks, out_tree, in_tree, single)
    return jacobian


def _reshape_last(t: Any, in_shape: tuple[int, ...]) -> Any:
    from numxla.primitives import reshape
    aval = abstractify(t)
    return reshape(t, aval.dimensions[:-1] + in_shape)


def _reshape_first(t: Any, out_shape: tuple[int, ...]) -> Any:
    from numxla.primitives import reshape
    aval = abstractify(t)
    return reshape(t, out_shape + aval.dimensions[1:])
