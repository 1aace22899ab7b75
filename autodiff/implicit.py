"""Derivatives of solvers by implicit differentiation: JAX's ``custom_root``
and ``custom_linear_solve`` (``numxla.lax``).

The forward result is whatever the user's ``solve`` returns; its iterations
are never differentiated.  The derivative comes from the equation the
solution satisfies instead:

* ``custom_root``: ``f(x*, theta) = 0`` gives ``J_x dx = -J_theta dtheta``,
  solved by the user's ``tangent_solve`` with ``J_x`` as a function;
* ``custom_linear_solve``: ``A(theta) x = b`` gives
  ``A dx = db - dA x``, solved by ``solve`` again; its transpose (reverse
  mode) solves ``A^T u = x_bar`` with ``transpose_solve``.

``theta`` are the traced values ``f``/``matvec`` closes over (its
parameters): :func:`hoist_closure` makes them explicit arguments, so that
the rules can differentiate with respect to them.  The values the solvers
close over become arguments too (without derivatives): the rules run on the
interpreter below the differentiating one, where its tracers are not
values.  Each solver is a
``custom_vjp`` (reverse mode) whose function is a ``custom_jvp`` (forward
mode), and both rules call the solver again, so derivatives of any order use
the rules rather than the solver's iterations.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from numxla.primitives._subgraph import trace_computation
from numxla.primitives.side_effects import stop_gradient
from numxla.tracer import pytree
from numxla.tracer.core import abstractify
from numxla.tracer.graph import eval_graph

from .custom import custom_jvp, custom_vjp
from .forward import jvp
from .reverse import vjp
from .rules import float0, is_differentiable_type

__all__ = ["custom_root", "custom_linear_solve", "closure_convert", "hoist_closure"]


def closure_convert(fun: Callable[..., Any], *example_args: Any, floats_only: bool = True
                    ) -> tuple[Callable[..., Any], list[Any]]:
    """JAX's ``closure_convert``: ``(converted, consts)``, where ``consts`` are
    the traced values (of ``jit``, ``grad``, ``vmap``...) that ``fun`` closes
    over when called like ``fun(*example_args)`` (by default only the
    floating-point ones, those differentiation can reach, as JAX's), and
    ``converted(*args, *consts)`` computes ``fun(*args)`` from them, so a
    ``custom_vjp`` can take ``converted`` as a non-differentiable argument and
    differentiate the closure through ``consts``.  ``fun`` is traced once, on
    the shapes of ``example_args``; with nothing to hoist, ``converted`` is
    ``fun``.  The solvers here hoist every traced value (``floats_only=False``)."""
    leaves, in_tree = pytree.flatten(example_args)
    comp = trace_computation(lambda *xs: fun(*in_tree.unflatten(xs)),
                             [abstractify(x) for x in leaves],
                             name=getattr(fun, "__name__", "closure"))
    captured = list(comp.captured)
    hoist = [not floats_only or np.issubdtype(abstractify(c).dtype, np.inexact)
             for c in captured]
    consts = [c for c, h in zip(captured, hoist) if h]
    if not consts:
        return fun, []
    graph, n_args = comp.graph, len(example_args)

    def converted(*args_and_consts: Any) -> Any:
        args, given = args_and_consts[:n_args], list(args_and_consts[n_args:])
        if len(given) != len(consts):
            raise TypeError(f"closure_convert: the converted function takes {n_args} "
                            f"argument(s) and {len(consts)} constant(s), got "
                            f"{len(args_and_consts)} values")
        arg_leaves, tree = pytree.flatten(tuple(args))
        if tree != in_tree:
            raise TypeError(f"closure_convert: arguments of structure {tree}, traced for "
                            f"{in_tree}")
        closed = [given.pop(0) if h else c for c, h in zip(captured, hoist)]
        return graph.out_tree.unflatten(eval_graph(graph, *arg_leaves, *closed))
    converted.__name__ = getattr(fun, "__name__", "converted")
    return converted, consts


def hoist_closure(fun: Callable[..., Any], *example_args: Any
                  ) -> tuple[Callable[..., Any], list[Any]]:
    """:func:`closure_convert` hoisting every traced value, whatever its type
    (the solvers' rules run below the interpreters those values belong to)."""
    return closure_convert(fun, *example_args, floats_only=False)


def check_callable(where: str, **functions: Any) -> None:
    """A ``TypeError`` naming ``where`` and the parameter for a non-callable."""
    for name, fn in functions.items():
        if not callable(fn):
            raise TypeError(f"{where}: {name} must be callable, got {type(fn).__name__}")


def _zeros_like(tree: Any, *, tangent: bool = False) -> Any:
    """Zeros of each leaf's type (as a ``tangent``: float0 for integers)."""
    def zero(x):
        aval = abstractify(x)
        dtype = float0 if tangent and not is_differentiable_type(aval) else aval.dtype
        return np.zeros(aval.dimensions, dtype)
    return pytree.tree_map(zero, tree)


def _split_aux(out: Any, has_aux: bool, where: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, ()
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{where}: with has_aux=True, solve must return a pair "
                        f"(solution, aux), got {type(out).__name__}")
    return out[0], stop_gradient(out[1])


def _with_rules(primal: Callable[..., tuple[Any, Any]],
                tangent: Callable[[Any, tuple, tuple], Any],
                cotangent: Callable[[Any, tuple, Any], tuple],
                args: Sequence[Any]) -> tuple[Any, Any]:
    """``primal(*args) -> (out, aux)``, differentiated by rules only:
    ``tangent(out, args, arg_tangents)`` (linear in the tangents) in forward
    mode and ``cotangent(out, args, out_cotangent)`` (one cotangent per
    argument) in reverse mode.  ``aux`` has no derivative."""
    @custom_jvp
    def forward_mode(*xs: Any) -> tuple[Any, Any]:
        return primal(*xs)

    @forward_mode.defjvp
    def _jvp(xs: tuple, dxs: tuple) -> tuple[Any, Any]:
        out, aux = reverse_mode(*xs)   # under an outer grad, that uses the cotangent rule
        return (out, aux), (tangent(out, xs, dxs), _zeros_like(aux, tangent=True))

    @custom_vjp
    def reverse_mode(*xs: Any) -> tuple[Any, Any]:
        return forward_mode(*xs)

    def _fwd(*xs: Any) -> tuple[tuple[Any, Any], tuple]:
        out, aux = forward_mode(*xs)
        return (out, aux), (out, xs)

    def _bwd(residuals: tuple, ct: tuple) -> tuple:
        out, xs = residuals
        return tuple(cotangent(out, xs, ct[0]))

    reverse_mode.defvjp(_fwd, _bwd)
    return reverse_mode(*args)


def _bind(fun: Callable[..., Any], consts: Sequence[Any]) -> Callable[[Any], Any]:
    """``fun(x, *consts)`` as a function of ``x``."""
    return lambda x: fun(x, *consts)


def _neg(tree: Any) -> Any:
    return pytree.tree_map(lambda v: -v, tree)


def _groups(xs: Sequence[Any], *sizes: int) -> list[tuple]:
    out, start = [], 0
    for n in sizes:
        out.append(tuple(xs[start:start + n]))
        start += n
    return out + [tuple(xs[start:])]


# --------------------------------------------------------------------------
# custom_root
# --------------------------------------------------------------------------

def custom_root(f: Callable[[Any], Any], initial_guess: Any,
                solve: Callable[[Callable, Any], Any],
                tangent_solve: Callable[[Callable, Any], Any], has_aux: bool = False) -> Any:
    """A root ``x`` of ``f`` found by ``solve(f, initial_guess)``, differentiable
    with respect to the values ``f`` closes over through the implicit
    function theorem: ``dx = -tangent_solve(g, J_theta dtheta)`` where ``g``
    is ``f``'s linearization in ``x`` at the root (``tangent_solve(g, y)``
    solves ``g(x) = y``).  ``initial_guess`` has no derivative, nor do values
    that only ``solve`` or ``tangent_solve`` close over.  With ``has_aux``,
    ``solve`` returns ``(x, aux)`` and so does this."""
    check_callable("custom_root", f=f, solve=solve, tangent_solve=tangent_solve)
    guess = stop_gradient(initial_guess)
    f_c, theta = hoist_closure(f, guess)
    solve_c, sigma = hoist_closure(lambda x0, *th: solve(_bind(f_c, th), x0), guess, *theta)

    def linearized(x: Any, th: Sequence[Any]) -> Callable[[Any], Any]:
        return lambda v: jvp(_bind(f_c, th), (x,), (v,))[1]

    tsolve_c, tau = hoist_closure(
        lambda y, x, *th: tangent_solve(linearized(x, th), y), guess, guess, *theta)
    sizes = (1, len(theta), len(sigma))

    def primal(*xs: Any) -> tuple[Any, Any]:
        (x0,), th, sg, _ = _groups(xs, *sizes)
        return _split_aux(solve_c(x0, *th, *sg), has_aux, "custom_root")

    def tangent_of(x: Any, xs: tuple, dth: tuple) -> Any:
        _, th, _, ta = _groups(xs, *sizes)
        _, rhs = jvp(lambda *c: f_c(x, *c), th, dth)
        return _neg(tsolve_c(rhs, x, *th, *ta))

    def tangent(x: Any, xs: tuple, dxs: tuple) -> Any:
        return tangent_of(x, xs, _groups(dxs, *sizes)[1])

    def cotangent(x: Any, xs: tuple, x_bar: Any) -> tuple:
        # the transpose of the (linear) tangent map, at the root already found
        th = _groups(xs, *sizes)[1]
        _, pullback = vjp(lambda *dth: tangent_of(x, xs, dth), *_zeros_like(th))
        return (None, *pullback(x_bar), *[None] * (len(xs) - 1 - len(th)))

    out, aux = _with_rules(primal, tangent, cotangent, (guess, *theta, *sigma, *tau))
    return (out, aux) if has_aux else out


# --------------------------------------------------------------------------
# custom_linear_solve
# --------------------------------------------------------------------------

class _LinearSystem:
    """``matvec(x, *theta)`` and its solvers ``solve(b, *theta, *sigma)``,
    ``transpose_solve(b, *theta, *tau)`` (``None``: not given), each with its
    closed-over values as trailing arguments."""

    def __init__(self, matvec: Callable, solve: Callable, transpose_solve: Callable | None,
                 symmetric: bool, has_aux: bool):
        self.matvec, self.solve, self.transpose_solve = matvec, solve, transpose_solve
        self.symmetric, self.has_aux = symmetric, has_aux

    def transposed(self, like: Any) -> "_LinearSystem":
        """The system of ``A^T`` (``like``: a vector of ``b``'s structure)."""
        if self.symmetric:
            return self
        if self.transpose_solve is None:
            raise TypeError("custom_linear_solve: reverse-mode differentiation needs "
                            "transpose_solve (or symmetric=True)")
        return _LinearSystem(_transpose(self.matvec, like), self.transpose_solve, self.solve,
                             False, self.has_aux)


def _transpose(matvec: Callable, like: Any) -> Callable:
    """``vecmat(u, *theta)``: the transpose of the linear map ``matvec(., *theta)``."""
    zeros = _zeros_like(like)

    def vecmat(u: Any, *theta: Any) -> Any:
        return vjp(_bind(matvec, theta), zeros)[1](u)[0]
    return vecmat


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any,
                        solve: Callable[[Callable, Any], Any],
                        transpose_solve: Callable[[Callable, Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """``x = solve(matvec, b)``, the solution of the linear system
    ``matvec(x) = b``, differentiated by linearity rather than through
    ``solve``: ``dx = solve(matvec, db - dmatvec(x))`` (``dmatvec``: the
    derivative of ``matvec`` with respect to the values it closes over) and,
    in reverse mode, ``b_bar = transpose_solve(vecmat, x_bar)`` (``vecmat``
    the transpose of ``matvec``; ``solve`` again when ``symmetric``).  With
    ``has_aux``, ``solve`` and ``transpose_solve`` return ``(x, aux)`` and
    so does this."""
    check_callable("custom_linear_solve", matvec=matvec, solve=solve)
    if transpose_solve is not None:
        check_callable("custom_linear_solve", transpose_solve=transpose_solve)
    mv, theta = hoist_closure(matvec, b)
    solve_c, sigma = hoist_closure(lambda r, *th: solve(_bind(mv, th), r), b, *theta)
    tsolve_c, tau = None, ()
    if transpose_solve is not None:
        vecmat = _transpose(mv, b)
        tsolve_c, tau = hoist_closure(
            lambda r, *th: transpose_solve(_bind(vecmat, th), r), b, *theta)
    system = _LinearSystem(mv, solve_c, tsolve_c, symmetric, has_aux)
    x, aux = _linear_solve(system, b, theta, sigma, tau)
    return (x, aux) if has_aux else x


def _linear_solve(system: _LinearSystem, b: Any, theta: tuple, sigma: tuple, tau: tuple
                  ) -> tuple[Any, Any]:
    sizes = (1, len(theta), len(sigma))

    def primal(*xs: Any) -> tuple[Any, Any]:
        (b,), th, sg, _ = _groups(xs, *sizes)
        x, aux = _split_aux(system.solve(b, *th, *sg), system.has_aux, "custom_linear_solve")
        if pytree.tree_structure(x) != pytree.tree_structure(b):
            raise TypeError(f"custom_linear_solve: solve must return a solution of b's "
                            f"structure {pytree.tree_structure(b)}, got "
                            f"{pytree.tree_structure(x)}")
        return x, aux

    def tangent(x: Any, xs: tuple, dxs: tuple) -> Any:
        _, th, sg, ta = _groups(xs, *sizes)
        (db,), dth, _, _ = _groups(dxs, *sizes)
        _, dax = jvp(lambda *c: system.matvec(x, *c), th, dth)
        rhs = pytree.tree_map(lambda u, v: u - v, db, dax)
        return _linear_solve(system, rhs, th, sg, ta)[0]

    def cotangent(x: Any, xs: tuple, x_bar: Any) -> tuple:
        (b,), th, sg, ta = _groups(xs, *sizes)
        transposed = system.transposed(b)
        b_bar = _linear_solve(transposed, x_bar, th, *((sg, ta) if transposed is system
                                                        else (ta, sg)))[0]
        # A(theta) x = b: theta_bar = -(d(A x)/d theta)^T b_bar
        _, pullback = vjp(lambda *c: system.matvec(x, *c), *th)
        return (b_bar, *pullback(_neg(b_bar)), *[None] * (len(sg) + len(ta)))

    return _with_rules(primal, tangent, cotangent, (b, *theta, *sigma, *tau))
