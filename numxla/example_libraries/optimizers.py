"""``jax.example_libraries.optimizers``: optimizers as ``(init_fun,
update_fun, get_params)`` triples over pytrees of parameters.

``opt_init(params) -> opt_state``, ``opt_update(step, grads, opt_state) ->
opt_state``, ``get_params(opt_state) -> params``.  An ``OptimizerState`` is
a pytree (it passes through ``jit``), holding each parameter leaf's own
state.  Step sizes are numbers or schedules ``step -> step size``.
"""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable

import numxla.primitives.numpy as jnp
from numxla.tree_util import register_pytree_node, tree_flatten, tree_map, tree_unflatten

__all__ = ["OptimizerState", "Optimizer", "optimizer", "sgd", "momentum", "nesterov",
           "adagrad", "rmsprop", "rmsprop_momentum", "adam", "adamax", "sm3", "constant",
           "exponential_decay", "inverse_time_decay", "polynomial_decay", "piecewise_constant",
           "make_schedule", "l2_norm", "clip_grads", "JoinPoint", "unpack_optimizer_state",
           "pack_optimizer_state"]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(OptimizerState,
                     lambda xs: ((xs.packed_state,), (xs.tree_def, xs.subtree_defs)),
                     lambda data, xs: OptimizerState(xs[0], data[0], data[1]))

Optimizer = namedtuple("Optimizer", ["init_fn", "update_fn", "params_fn"])

Schedule = Callable[[Any], Any]


def _unzip2(pairs: Any) -> tuple[tuple, tuple]:
    firsts, seconds = [], []
    for a, b in pairs:
        firsts.append(a)
        seconds.append(b)
    return tuple(firsts), tuple(seconds)


def optimizer(opt_maker: Callable[..., tuple[Callable, Callable, Callable]]
              ) -> Callable[..., Optimizer]:
    """Decorator: an optimizer for single arrays as one for pytrees of them."""
    @functools.wraps(opt_maker)
    def tree_opt_maker(*args: Any, **kwargs: Any) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Any) -> OptimizerState:
            x0_flat, tree = tree_flatten(x0_tree)
            initial_states = [init(x0) for x0 in x0_flat]
            states_flat, subtrees = _unzip2(map(tree_flatten, initial_states))
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Any, grad_tree: Any, opt_state: OptimizerState) -> OptimizerState:
            states_flat, tree, subtrees = opt_state
            grad_flat, tree2 = tree_flatten(grad_tree)
            if tree2 != tree:
                raise TypeError(f"optimizer update function was passed a gradient tree that did "
                                f"not match the parameter tree structure with which it was "
                                f"initialized: parameter tree {tree} and grad tree {tree2}.")
            states = map(tree_unflatten, subtrees, states_flat)
            new_states = map(functools.partial(update, i), grad_flat, states)
            new_states_flat, subtrees2 = _unzip2(map(tree_flatten, new_states))
            for subtree, subtree2 in zip(subtrees, subtrees2):
                if subtree2 != subtree:
                    raise TypeError(f"optimizer update function produced an output structure "
                                    f"that did not match its input structure: input {subtree} "
                                    f"and output {subtree2}.")
            return OptimizerState(new_states_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Any:
            states_flat, tree, subtrees = opt_state
            states = map(tree_unflatten, subtrees, states_flat)
            return tree_unflatten(tree, map(get_params, states))

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


# -- optimizers -------------------------------------------------------------------------------

def _first(state: Any) -> Any:
    """The parameters of a per-leaf state ``(x, *moments)``."""
    return state[0]


@optimizer
def sgd(step_size: Any) -> tuple:
    """Stochastic gradient descent."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0

    def update(i: Any, g: Any, x: Any) -> Any:
        return x - step_size(i) * g

    def get_params(x: Any) -> Any:
        return x
    return init, update, get_params


def _momentum_steps(step_size: Any, mass: float, lookahead: bool) -> tuple:
    """SGD with a velocity; ``lookahead`` steps along Nesterov's ``mass * v + g``."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, velocity = state
        velocity = mass * velocity + g
        direction = mass * velocity + g if lookahead else velocity
        return x - step_size(i) * direction, velocity

    return init, update, _first


@optimizer
def momentum(step_size: Any, mass: float) -> tuple:
    """SGD with momentum."""
    return _momentum_steps(step_size, mass, lookahead=False)


@optimizer
def nesterov(step_size: Any, mass: float) -> tuple:
    """SGD with Nesterov momentum."""
    return _momentum_steps(step_size, mass, lookahead=True)


@optimizer
def adagrad(step_size: Any, momentum: float = 0.9) -> tuple:
    """Adagrad with momentum."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, g_sq, m = state
        g_sq += jnp.square(g)
        g_sq_inv_sqrt = jnp.where(g_sq > 0, 1. / jnp.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size: Any, gamma: float = 0.9, eps: float = 1e-8) -> tuple:
    """RMSProp."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _first


@optimizer
def rmsprop_momentum(step_size: Any, gamma: float = 0.9, eps: float = 1e-8,
                     momentum: float = 0.9) -> tuple:
    """RMSProp with momentum."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + jnp.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _first


@optimizer
def adam(step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> tuple:
    """Adam (Kingma and Ba)."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * jnp.square(g) + b2 * v
        mhat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        vhat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size: Any, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> tuple:
    """AdaMax, Adam with the infinity norm."""
    step_size = make_schedule(step_size)

    def init(x0: Any) -> Any:
        return x0, jnp.zeros_like(x0), jnp.zeros_like(x0)

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = jnp.maximum(b2 * u, jnp.abs(g))
        return x - (step_size(i) / (1 - b1 ** (i + 1))) * m / (u + eps), m, u

    return init, update, _first


@optimizer
def sm3(step_size: Any, momentum: float = 0.9) -> tuple:
    """SM3, memory-efficient adaptive optimization (accumulators per axis)."""
    step_size = make_schedule(step_size)

    def splice(seq: Any, i: int, x: Any) -> list:
        lst = list(seq)
        lst[i:i + 1] = x
        return lst

    def broadcast_into(ndim: int, x: Any, axis: int) -> Any:
        idx = splice([None] * ndim, axis, [slice(None)])
        return x[tuple(idx)]

    def init(x0: Any) -> Any:
        x_shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        vs = [jnp.zeros(sz, dtype=x0.dtype) for sz in x0.shape]
        return x0, jnp.zeros_like(x0), vs, x_shape

    def update(i: Any, g: Any, state: Any) -> Any:
        x, m, vs, x_shape = state
        vs = [broadcast_into(g.ndim, v, j) for j, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, vs) + jnp.square(g)
        accum_inv_sqrt = jnp.where(accum > 0, 1. / jnp.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        vs = [accum.max(tuple(splice(range(x.ndim), j, []))) for j in range(x.ndim)]
        return x, m, vs, x_shape

    def get_params(state: Any) -> Any:
        x, _, _, x_shape = state
        return x.reshape(x_shape)
    return init, update, get_params


# -- schedules --------------------------------------------------------------------------------

def constant(step_size: Any) -> Schedule:
    def schedule(i: Any) -> Any:
        return step_size
    return schedule


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    def schedule(i: Any) -> Any:
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False) -> Schedule:
    if staircase:
        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    else:
        def schedule(i: Any) -> Any:
            return step_size / (1 + decay_rate * i / decay_steps)
    return schedule


def polynomial_decay(step_size: Any, decay_steps: Any, final_step_size: Any,
                     power: float = 1.0) -> Schedule:
    def schedule(step_num: Any) -> Any:
        step_num = jnp.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i: Any) -> Any:
        return values[jnp.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule: Any) -> Schedule:
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# -- utilities --------------------------------------------------------------------------------

def l2_norm(tree: Any) -> Any:
    """The L2 norm of all the leaves of ``tree`` together."""
    leaves, _ = tree_flatten(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """``grad_tree`` scaled down to L2 norm ``max_norm`` if it is longer."""
    norm = l2_norm(grad_tree)

    def normalize(g: Any) -> Any:
        return jnp.where(norm < max_norm, g, g * (max_norm / norm))
    return tree_map(normalize, grad_tree)


class JoinPoint:
    """Marks where a parameter's own state subtree joins the parameter tree."""

    def __init__(self, subtree: Any):
        self.subtree = subtree

    def __iter__(self) -> Any:  # to unpack as a tuple
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """An ``OptimizerState`` as a pytree of ``JoinPoint`` s (e.g. to pickle it)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = map(tree_unflatten, subtree_defs, states_flat)
    return tree_unflatten(tree_def, [JoinPoint(subtree) for subtree in subtrees])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of :func:`unpack_optimizer_state`."""
    sentinels, tree_def = tree_flatten(marked_pytree)
    if not all(isinstance(s, JoinPoint) for s in sentinels):
        raise TypeError("pack_optimizer_state: every leaf must be a JoinPoint")
    states_flat, subtree_defs = _unzip2(map(tree_flatten, [s.subtree for s in sentinels]))
    return OptimizerState(states_flat, tree_def, subtree_defs)
