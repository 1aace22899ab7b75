"""Shared checks for the autodiff tests.

``check_vmap(f, args, in_axes)`` compares ``vmap(f)`` with stacking ``f`` of
each slice (the independent formulation); derivatives are checked with the
public ``autodiff.check_grads`` (finite differences); ``_numerical_grad``
is a plain central difference for the tests that compare one gradient with
it, ``_rng(seed, salt)`` the tests' seeded generators.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from numxla.autodiff import vmap
from numxla.tracer import pytree


def _rng(seed: int, salt: int = 0) -> np.random.Generator:
    """A generator seeded by ``seed`` and a per-test ``salt`` (distinct streams)."""
    return np.random.default_rng(1000 * salt + seed)


def _numerical_grad(f: Callable[[np.ndarray], Any], x: np.ndarray, eps: float = 1e-6
                    ) -> np.ndarray:
    """The gradient of the scalar function ``f`` at ``x`` by central differences."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        g[i] = (float(f(x + step)) - float(f(x - step))) / (2 * eps)
    return g


def _take(x: Any, axis: int | None, i: int) -> Any:
    return x if axis is None else np.take(np.asarray(x), i, axis=axis)


def check_vmap(f: Callable[..., Any], args: Sequence[Any], in_axes: Any = 0, out_axes: int = 0,
               *, rtol: float = 1e-6, atol: float = 1e-6) -> None:
    """``vmap(f, in_axes, out_axes)(*args)`` equals ``f`` applied to each slice
    and stacked at ``out_axes``.  ``in_axes``: an int, or one int/None per
    argument (array arguments only)."""
    args = tuple(args)
    axes = [in_axes] * len(args) if in_axes is None or isinstance(in_axes, int) else list(in_axes)
    sizes = {np.shape(a)[ax] for a, ax in zip(args, axes) if ax is not None}
    assert len(sizes) == 1, sizes
    (n,) = sizes
    got = vmap(f, in_axes=tuple(axes), out_axes=out_axes)(*args)
    per_slice = [f(*(_take(a, ax, i) for a, ax in zip(args, axes))) for i in range(n)]
    got_leaves, got_tree = pytree.flatten(got)
    want_leaves = [np.stack([np.asarray(leaf) for leaf in leaves], axis=out_axes)
                   for leaves in zip(*(pytree.tree_leaves(s) for s in per_slice))]
    assert got_tree == pytree.tree_structure(per_slice[0]), (got_tree, per_slice[0])
    for g, w in zip(got_leaves, want_leaves):
        g = np.asarray(g)
        assert g.shape == w.shape, (g.shape, w.shape)
        if np.issubdtype(w.dtype, np.inexact):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)
