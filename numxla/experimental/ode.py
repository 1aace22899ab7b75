"""``jax.experimental.ode``: ``odeint``, the solution of ``dy/dt = func(y, t,
*args)`` at given times, by the Dormand–Prince 5(4) Runge–Kutta pair with
adaptive steps.

The state (any pytree of float arrays) travels as one vector.  Each step
takes the fifth-order solution and estimates its error by the difference
with the embedded fourth-order one; a step is accepted when the error's RMS
norm, scaled by ``atol + rtol * |y|``, is at most 1, and the next step size
is ``0.9 * error ** -1/5`` times this one (between 0.2 and 10 times).  Steps
are shortened to land on each requested time, so the solution there is a
step's end, not an interpolation.  The loops are ``lax.while_loop`` and
``lax.scan``: ``odeint`` runs eagerly, under ``jit`` and under ``vmap``.

Reverse mode is the adjoint method (a ``custom_vjp``): from the last time
back to the first, the state ``y``, its adjoint ``a`` (``da/dt = -a^T
df/dy``) and the integral of ``a^T df/dargs`` are solved together backwards,
``a`` jumping by the output's cotangent at each requested time.  Forward
mode (``jvp``) differentiates the solver's steps.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

import numxla.primitives as lax
import numxla.primitives.numpy as jnp
from numxla.autodiff.custom import custom_vjp
from numxla.autodiff.implicit import check_callable, hoist_closure
from numxla.autodiff.reverse import vjp
from numxla.autodiff.rules import float0
from numxla.tracer import pytree
from numxla.tracer.core import Tracer, abstractify

__all__ = ["odeint"]

# The Dormand–Prince 5(4) tableau: nodes, stage weights, and the fifth- and
# fourth-order solutions' weights (the fifth-order one is the last stage's
# argument, so its derivative starts the next step).
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = ((),
      (1 / 5,),
      (3 / 40, 9 / 40),
      (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
      (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84))
_B5 = _A[6] + (0.0,)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_ERROR = tuple(b5 - b4 for b5, b4 in zip(_B5, _B4))

_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0


class _Layout:
    """A pytree of arrays as one vector (the leaves' promoted type), with or
    without leading axes shared by every leaf."""

    def __init__(self, tree: Any):
        leaves, self.tree = pytree.flatten(tree)
        avals = [abstractify(x) for x in leaves]
        self.shapes = [a.dimensions for a in avals]
        self.dtypes = [a.dtype for a in avals]
        self.dtype = jnp.result_type(*leaves) if leaves else np.dtype(np.float32)
        self.size = sum(math.prod(s) for s in self.shapes)

    def ravel(self, tree: Any, lead: tuple[int, ...] = ()) -> Any:
        leaves = pytree.tree_leaves(tree)
        if not leaves:
            return jnp.zeros(lead + (0,), self.dtype)
        return jnp.concatenate([jnp.reshape(x, lead + (-1,)).astype(self.dtype)
                                for x in leaves], axis=-1)

    def unravel(self, v: Any) -> Any:
        lead, out, start = tuple(v.shape[:-1]), [], 0
        for shape, dtype in zip(self.shapes, self.dtypes):
            size = math.prod(shape)
            out.append(jnp.reshape(v[..., start:start + size], lead + shape).astype(dtype))
            start += size
        return self.tree.unflatten(out)


# --------------------------------------------------------------------------
# the integrator (on vectors)
# --------------------------------------------------------------------------

def _rms(x: Any) -> Any:
    return jnp.sqrt(jnp.mean(jnp.square(x))) if x.shape[-1] else jnp.zeros((), x.dtype)


def _step(fun: Callable, y: Any, f: Any, t: Any, h: Any) -> tuple[Any, Any, Any]:
    """One Dormand–Prince step of size ``h`` from ``(t, y)`` (``f = fun(y, t)``):
    the fifth-order solution, its derivative and the error estimate."""
    hy = h.astype(y.dtype)
    ks = [f]
    for a_row, c in zip(_A[1:], _C[1:]):
        ks.append(fun(y + hy * _weighted(a_row, ks), t + h * c))
    y_new = y + hy * _weighted(_B5, ks)
    return y_new, ks[-1], hy * _weighted(_ERROR, ks)


def _weighted(weights: tuple[float, ...], ks: list[Any]) -> Any:
    terms = [w * k for w, k in zip(weights, ks) if w != 0.0]
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total


def _initial_step(fun: Callable, y0: Any, f0: Any, t0: Any, rtol: Any, atol: Any) -> Any:
    """A first step size from the state's and the derivative's magnitudes
    (the usual heuristic: one explicit Euler trial step of ``0.01 |y| / |f|``)."""
    scale = atol + rtol * jnp.abs(y0)
    d0, d1 = _rms(y0 / scale), _rms(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / jnp.maximum(d1, 1e-30))
    f1 = fun(y0 + h0 * f0, t0 + h0.astype(t0.dtype))
    d2 = _rms((f1 - f0) / scale) / h0
    d12 = jnp.maximum(d1, d2)
    h1 = jnp.where(d12 <= 1e-15, jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d12, 1e-30)) ** (1 / 5))
    return jnp.minimum(100 * h0, h1).astype(t0.dtype)


def _integrate(fun: Callable, y0: Any, ts: Any, rtol: float, atol: float, mxstep: float,
               hmax: float) -> Any:
    """``y`` at every time of ``ts`` (``y0`` at ``ts[0]``), as rows."""
    rtol, atol = (jnp.asarray(v, y0.dtype) for v in (rtol, atol))
    t0 = ts[0]
    f0 = fun(y0, t0)
    dt0 = jnp.minimum(_initial_step(fun, y0, f0, t0, rtol, atol), hmax).astype(t0.dtype)
    step_limit = None if math.isinf(mxstep) else int(mxstep) - 1

    def to(carry: tuple, target: Any) -> tuple[tuple, Any]:
        def unfinished(state):
            _, _, t, dt, _ = state
            return (t < target) & (t + dt > t)   # a NaN or vanishing step stops too

        def attempt(state):
            y, f, t, dt, n = state
            remaining = target - t
            last = dt >= remaining
            if step_limit is not None:   # out of steps: cover the rest in one
                forced = n >= step_limit
                last = last | forced
            h = jnp.where(last, remaining, dt)
            y_new, f_new, error = _step(fun, y, f, t, h)
            ratio = _rms(error / (atol + rtol * jnp.maximum(jnp.abs(y), jnp.abs(y_new))))
            accept = ratio <= 1
            if step_limit is not None:
                accept = accept | forced
            factor = jnp.clip(_SAFETY * jnp.maximum(ratio, 1e-10) ** -0.2, _MIN_FACTOR,
                              _MAX_FACTOR).astype(t.dtype)
            # a step shortened to land on the target says little about the next one's size
            dt_new = jnp.where(accept & last, jnp.maximum(dt, h * factor), h * factor)
            return (jnp.where(accept, y_new, y), jnp.where(accept, f_new, f),
                    jnp.where(accept, jnp.where(last, target, t + h), t),
                    jnp.minimum(dt_new, hmax).astype(t.dtype), n + 1)

        y, f, t, dt = carry
        y, f, t, dt, _ = lax.while_loop(unfinished, attempt, (y, f, t, dt, jnp.int32(0)))
        return (y, f, t, dt), jnp.where(t >= target, y, jnp.nan)

    _, ys = lax.scan(to, (y0, f0, t0, dt0), ts[1:])
    return jnp.concatenate([y0[None], ys])


# --------------------------------------------------------------------------
# odeint and its adjoint
# --------------------------------------------------------------------------

def _on_vectors(func: Callable, layout: _Layout, args: tuple) -> Callable:
    """``func`` on the state as a vector."""
    def fun(y: Any, t: Any) -> Any:
        dy = func(layout.unravel(y), t, *args)
        if pytree.tree_structure(dy) != layout.tree or \
                [tuple(np.shape(x)) for x in pytree.tree_leaves(dy)] != layout.shapes:
            raise TypeError(f"odeint: func must return the structure and shapes of y0 "
                            f"({layout.tree}, shapes {layout.shapes}), got "
                            f"{pytree.tree_structure(dy)}, shapes "
                            f"{[tuple(np.shape(x)) for x in pytree.tree_leaves(dy)]}")
        return layout.ravel(dy)
    return fun


def _solve(func: Callable, rtol: float, atol: float, mxstep: float, hmax: float, y0: Any,
           t: Any, *args: Any) -> Any:
    layout = _Layout(y0)
    ys = _integrate(_on_vectors(func, layout, args), layout.ravel(y0), t, rtol, atol, mxstep,
                    hmax)
    return layout.unravel(ys)


_odeint = custom_vjp(_solve, nondiff_argnums=(0, 1, 2, 3, 4))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, t, *args):
    ys = _solve(func, rtol, atol, mxstep, hmax, y0, t, *args)
    return ys, (ys, t, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, residuals, ys_bar):
    ys, t, args = residuals
    layout = _Layout(pytree.tree_map(lambda y: y[0], ys))
    n_times = t.shape[0]
    y_rows, g_rows = layout.ravel(ys, (n_times,)), layout.ravel(ys_bar, (n_times,))
    arg_leaves, arg_tree = pytree.flatten(args)
    wrt = [i for i, x in enumerate(arg_leaves) if abstractify(x).element_type.is_floating]
    params = [arg_leaves[i] for i in wrt]

    def f(y: Any, t: Any, params: list[Any]) -> Any:
        leaves = list(arg_leaves)
        for i, p in zip(wrt, params):
            leaves[i] = p
        return _on_vectors(func, layout, tuple(arg_tree.unflatten(leaves)))(y, t)

    augmented = _Layout((y_rows[0], y_rows[0], params))

    def backwards(z: Any, s: Any) -> Any:
        """The augmented system in reversed time ``s = -t``."""
        y, a, _ = augmented.unravel(z)
        dy, pullback = vjp(lambda y, *p: f(y, -s, list(p)), y, *params)
        a_y, *a_params = pullback(a)
        return augmented.ravel((-dy, a_y, a_params))

    def interval(carry: tuple, xs: tuple) -> tuple[tuple, Any]:
        a, params_bar = carry
        y, g, t_end, t_start = xs
        a = a + g
        t_bar = jnp.vdot(g, f(y, t_end, params)).astype(t.dtype)
        z = augmented.ravel((y, a, params_bar))
        z = _integrate(backwards, z, jnp.stack([-t_end, -t_start]), rtol, atol, mxstep,
                       hmax)[-1]
        _, a, params_bar = augmented.unravel(z)
        return (a, params_bar), t_bar

    zeros = (jnp.zeros_like(y_rows[0]), [jnp.zeros_like(p) for p in params])
    (a, params_bar), t_bars = lax.scan(
        interval, zeros, (y_rows[1:], g_rows[1:], t[1:], t[:-1]), reverse=True)
    # moving t[0] moves the start: y(t) shifts by -(its sensitivity to y0) f(y0, t0)
    t0_bar = -jnp.vdot(a, f(y_rows[0], t[0], params)).astype(t.dtype)
    leaves_bar = [np.zeros(np.shape(x), float0) for x in arg_leaves]
    for i, p_bar in zip(wrt, params_bar):
        leaves_bar[i] = p_bar
    return (layout.unravel(a + g_rows[0]), jnp.concatenate([t0_bar[None], t_bars]),
            *arg_tree.unflatten(leaves_bar))


_odeint.defvjp(_odeint_fwd, _odeint_bwd)


def _check_args(y0: Any, t: Any, args: tuple) -> tuple[Any, Any]:
    """``y0`` (float leaves) and ``t`` (a 1-D float array) as arrays, or a clear error."""
    leaves, tree = pytree.flatten(y0)
    arrays = []
    for leaf in leaves:
        try:
            x = jnp.asarray(leaf)
        except TypeError:
            raise TypeError(f"odeint: y0 must be an array or a pytree of arrays, got "
                            f"{type(leaf).__name__}") from None
        if not abstractify(x).element_type.is_floating:
            raise TypeError(f"odeint: y0 must have real floating-point values, got {x.dtype}")
        arrays.append(x)
    t = jnp.asarray(t)
    if t.ndim != 1 or t.shape[0] == 0:
        raise ValueError(f"odeint: t must be a non-empty 1-D array of times, got shape "
                         f"{tuple(t.shape)}")
    if not abstractify(t).element_type.is_floating:
        t = t.astype(jnp.result_type(float))
    if not isinstance(t, Tracer) and np.any(np.diff(np.asarray(t)) <= 0):
        raise ValueError(f"odeint: t must be strictly increasing, got {np.asarray(t)}")
    for leaf in pytree.tree_leaves(args):
        try:
            abstractify(leaf)
        except TypeError:
            raise TypeError(f"odeint: *args must be arrays, scalars or pytrees of them, got "
                            f"{type(leaf).__name__} {leaf!r}") from None
    return tree.unflatten(arrays), t


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8,
           atol: float = 1.4e-8, mxstep: float = math.inf, hmax: float = math.inf) -> Any:
    """The solution of ``dy/dt = func(y, t, *args)``, ``y(t[0]) = y0``, at every
    time of ``t`` (1-D, strictly increasing): ``y0``'s structure with a
    leading axis of ``len(t)`` on each leaf.

    ``rtol``/``atol``: the local error tolerances; ``mxstep``: the most steps
    per interval between two times of ``t`` (when they run out, the rest of
    the interval is one step without error control); ``hmax``: the largest
    step.  A failed solve (a NaN, a step too small to advance) gives NaN.
    Differentiable in reverse mode with respect to ``y0``, ``t``, ``args`` and
    the values ``func`` closes over, by the adjoint method."""
    check_callable("odeint", func=func)
    if not mxstep >= 1:
        raise ValueError(f"odeint: mxstep must be at least 1, got {mxstep}")
    if not hmax > 0:
        raise ValueError(f"odeint: hmax must be positive, got {hmax}")
    y0, t = _check_args(y0, t, args)
    converted, consts = hoist_closure(func, y0, t[0], *args)
    return _odeint(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)
