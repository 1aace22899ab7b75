"""``check_grads``: derivatives against central finite differences.

Forward mode compares ``jvp(f, x, v)`` with ``(f(x + eps v) - f(x - eps v)) / 2 eps``
for a random direction ``v``; reverse mode compares ``<u, J v>`` (finite
differences) with ``<vjp(u), v>`` for random ``u`` and ``v``.  ``order=2``
checks the derivative functions themselves again, so second derivatives
(``jvp`` of ``jvp``, ``vjp`` of ``vjp``) are checked too.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from numxla.tracer import pytree
from numxla.tracer.core import abstractify

from .forward import jvp
from .reverse import vjp
from .rules import float0, is_differentiable_type

__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp"]

# Tolerances per dtype (atol = rtol), as loose as finite differences need.
_TOLERANCE = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 3e-2,
              np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 3e-2,
              np.dtype(np.complex128): 1e-5}
_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-2, np.dtype(np.complex64): 1e-2}
_DEFAULT_EPS = 1e-4


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(x) for x in pytree.tree_leaves(tree)]


def _is_inexact(x: np.ndarray) -> bool:
    return x.dtype != float0 and np.issubdtype(x.dtype, np.inexact)


def _diff_leaves(tree: Any) -> list[np.ndarray]:
    return [x for x in _leaves(tree) if _is_inexact(x)]


def _random_like(x: Any, rng: np.random.Generator) -> Any:
    if np.asarray(x).dtype == float0:
        return x
    aval = abstractify(x)
    if not is_differentiable_type(aval):
        return np.zeros(aval.dimensions, float0)
    v = rng.standard_normal(aval.dimensions)
    if aval.element_type.is_complex:
        v = v + 1j * rng.standard_normal(aval.dimensions)
    return np.asarray(v, aval.dtype)


def _inner(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray]) -> float:
    """The real, non-conjugating inner product: the one under which a VJP is
    the transpose of a JVP (complex values included)."""
    return float(sum(np.real(np.sum(np.asarray(x, np.complex128) * np.asarray(y, np.complex128)))
                     for x, y in zip(xs, ys)))


def _tolerance(trees: Sequence[Any], atol: float | None, rtol: float | None
               ) -> tuple[float, float]:
    tol = max((_TOLERANCE.get(x.dtype, 1e-5) for t in trees for x in _diff_leaves(t)),
              default=1e-5)
    return (tol if atol is None else atol), (tol if rtol is None else rtol)


def _step(args: Sequence[Any], direction: Sequence[Any], scale: float) -> tuple[Any, ...]:
    def one(x, v):
        aval = abstractify(x)
        if not is_differentiable_type(aval):
            return x
        return np.asarray(np.asarray(x) + scale * np.asarray(v), aval.dtype)
    return tuple(pytree.tree_map(one, a, v) for a, v in zip(args, direction))


def _eps_for(args: Sequence[Any], eps: float | None) -> float:
    if eps is not None:
        return eps
    return max((_EPS.get(x.dtype, _DEFAULT_EPS) for x in _diff_leaves(args)), default=_DEFAULT_EPS)


def numerical_jvp(f: Callable[..., Any], args: Sequence[Any], direction: Sequence[Any],
                  eps: float) -> list[np.ndarray]:
    """Central differences of ``f`` at ``args`` along ``direction`` (flat results)."""
    plus = _leaves(f(*_step(args, direction, eps)))
    minus = _leaves(f(*_step(args, direction, -eps)))
    return [(p.astype(np.complex128 if np.iscomplexobj(p) else np.float64) - m) / (2 * eps)
            if _is_inexact(p) else np.zeros(p.shape) for p, m in zip(plus, minus)]


def check_jvp(f: Callable[..., Any], args: Sequence[Any], *, atol=None, rtol=None, eps=None,
              rng: np.random.Generator | None = None) -> None:
    rng = rng or np.random.default_rng(0)
    args = tuple(args)
    v = tuple(pytree.tree_map(lambda x: _random_like(x, rng), a) for a in args)
    eps = _eps_for(args, eps)
    out, t_out = jvp(f, args, v)
    expected = numerical_jvp(f, args, v, eps)
    got = _leaves(t_out)
    atol, rtol = _tolerance([out, args], atol, rtol)
    outs = _leaves(out)
    for i, (g, e, o) in enumerate(zip(got, expected, outs)):
        if not _is_inexact(o):
            continue
        np.testing.assert_allclose(g, e.astype(g.dtype), atol=atol, rtol=rtol,
                                   err_msg=f"check_grads (fwd): tangent of output {i} "
                                           f"(shape {o.shape}) differs from finite differences")


def check_vjp(f: Callable[..., Any], args: Sequence[Any], *, atol=None, rtol=None, eps=None,
              rng: np.random.Generator | None = None) -> None:
    rng = rng or np.random.default_rng(1)
    args = tuple(args)
    out, vjp_fn = vjp(f, *args)
    u = pytree.tree_map(lambda x: _random_like(x, rng), out)
    ct_in = vjp_fn(u)
    v = tuple(pytree.tree_map(lambda x: _random_like(x, rng), a) for a in args)
    eps = _eps_for(args, eps)
    jv = numerical_jvp(f, args, v, eps)
    out_leaves = _leaves(out)
    u_leaves = [x for x, o in zip(_leaves(u), out_leaves) if _is_inexact(o)]
    jv = [x for x, o in zip(jv, out_leaves) if _is_inexact(o)]
    ct_leaves = [c for c in _leaves(ct_in) if _is_inexact(c)]
    v_leaves = [x for x in _leaves(v) if _is_inexact(x)]
    expected = _inner(u_leaves, jv)
    got = _inner(ct_leaves, v_leaves)
    atol, rtol = _tolerance([out, args], atol, rtol)
    np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol,
                               err_msg="check_grads (rev): <vjp(u), v> differs from "
                                       "<u, J v> by finite differences")


def _without_float0(tree: Any) -> list[Any]:
    """The leaves of a derivative that are not float0 (the tangents and
    cotangents of integer values carry no data and cannot be differentiated)."""
    return [x for x in pytree.tree_leaves(tree)
            if not (isinstance(x, np.ndarray) and x.dtype == float0)]


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), *, atol: float | None = None,
                rtol: float | None = None, eps: float | None = None) -> None:
    """Check ``f``'s derivatives at ``args`` against finite differences, in
    the given modes, up to ``order`` (JAX's ``check_grads``).  Raises an
    ``AssertionError`` naming the mode and output that differ."""
    args = tuple(args)
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {mode!r} (use 'fwd' or 'rev')")
    kw = dict(atol=atol, rtol=rtol, eps=eps)

    def check(fn, fn_args, level):
        if "fwd" in modes:
            check_jvp(fn, fn_args, **kw, rng=np.random.default_rng(level))
            if level < order:
                v = tuple(pytree.tree_map(lambda x: _random_like(x, np.random.default_rng(7)), a)
                          for a in fn_args)
                check(lambda *a: _without_float0(jvp(fn, a, v)[1]), fn_args, level + 1)
        if "rev" in modes:
            check_vjp(fn, fn_args, **kw, rng=np.random.default_rng(100 + level))
            if level < order:
                out = fn(*fn_args)
                u = pytree.tree_map(lambda x: _random_like(x, np.random.default_rng(8)), out)
                check(lambda *a: _without_float0(vjp(fn, *a)[1](u)), fn_args, level + 1)

    check(f, args, 1)
