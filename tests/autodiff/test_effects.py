"""Derivatives and batching of rng, side-effect, token and collective ops.

Collectives are checked on programs of several processes
(``lax.run_replicated``): derivatives against central differences of the
whole replicated program (every process's inputs perturbed at once), vmap
against running the program once per batch element.
"""
from __future__ import annotations

import numpy as np
import pytest

from numxla import autodiff
from numxla import compile
import numxla.primitives as lax
from numxla.autodiff import check_grads, grad, jvp, vjp, vmap
from numxla.autodiff.rules import Forward, Zero, jvp_rules, vjp_rules
from tests.autodiff.util import check_vmap
from numxla.tracer.core import abstractify

EPS = 1e-5
TOL = 1e-6


def _rand(rng, *shape):
    return rng.standard_normal(shape)


# ==========================================================================
# helpers: derivatives and vmap of replicated programs
# ==========================================================================

def _run(fn, per_process, grid):
    """``fn`` (returning a tuple of arrays) on every process; a list over
    processes of lists of NumPy arrays."""
    R, P = grid
    outs = lax.run_replicated(fn, [tuple(a) for a in per_process], num_replicas=R,
                              num_partitions=P)
    return [[np.asarray(o) for o in out] for out in outs]


def _inner(xs, ys):
    return float(sum(np.sum(np.asarray(a, np.float64) * np.asarray(b, np.float64))
                     for x, y in zip(xs, ys) for a, b in zip(x, y)))


def check_replicated_grads(f, xs, grid, order=2, consts=None, level=1):
    """``f(*x, *c) -> tuple`` is one process's program; ``xs[p]`` the
    differentiated inputs of process ``p`` (``consts[p]`` fixed ones).
    Forward mode: per-process JVPs against central differences of the whole
    program along a random direction; reverse mode: ``sum_p <vjp_p(u), v_p>``
    against ``sum_p <u_p, (J v)_p>``; ``order=2`` checks the JVP and VJP
    programs again (the direction and cotangent become constants)."""
    rng = np.random.default_rng(level)
    n = len(xs[0])
    consts = consts or [()] * len(xs)
    vs = [tuple(_rand(rng, *np.shape(a)) for a in x) for x in xs]
    plus = _run(f, [tuple(a + EPS * b for a, b in zip(x, v)) + c
                    for x, v, c in zip(xs, vs, consts)], grid)
    minus = _run(f, [tuple(a - EPS * b for a, b in zip(x, v)) + c
                     for x, v, c in zip(xs, vs, consts)], grid)
    numeric = [[(p - m) / (2 * EPS) for p, m in zip(pp, mm)] for pp, mm in zip(plus, minus)]

    def jvp_f(*a):
        x, v, c = a[:n], a[n:2 * n], a[2 * n:]
        return jvp(lambda *y: f(*y, *c), x, v)[1]

    got = _run(jvp_f, [x + v + c for x, v, c in zip(xs, vs, consts)], grid)
    for p, (g, e) in enumerate(zip(got, numeric)):
        for gi, ei in zip(g, e):
            np.testing.assert_allclose(gi, ei, rtol=TOL, atol=TOL,
                                       err_msg=f"fwd, order {level}, process {p}")
    outs = _run(f, [x + c for x, c in zip(xs, consts)], grid)
    us = [tuple(_rand(rng, *np.shape(o)) for o in out) for out in outs]

    def vjp_f(*a):
        x, u, c = a[:n], a[n:n + len(us[0])], a[n + len(us[0]):]
        return tuple(vjp(lambda *y: f(*y, *c), *x)[1](tuple(u)))

    cts = _run(vjp_f, [x + u + c for x, u, c in zip(xs, us, consts)], grid)
    np.testing.assert_allclose(_inner(cts, vs), _inner(us, numeric), rtol=TOL, atol=TOL,
                               err_msg=f"rev, order {level}")
    if level < order:
        check_replicated_grads(jvp_f, xs, grid, order, [v + c for v, c in zip(vs, consts)],
                               level + 1)
        check_replicated_grads(vjp_f, xs, grid, order, [u + c for u, c in zip(us, consts)],
                               level + 1)


def check_replicated_vmap(f, xs, grid, in_axes):
    """Per process, ``vmap(f, in_axes)`` equals ``f`` run on each batch
    element (the whole program once per element), stacked at 0."""
    sizes = {np.shape(a)[ax] for a, ax in zip(xs[0], in_axes) if ax is not None}
    (size,) = sizes
    got = _run(lambda *a: tuple(vmap(f, in_axes=tuple(in_axes))(*a)), xs, grid)
    slices = [_run(f, [tuple(a if ax is None else np.take(a, i, axis=ax)
                             for a, ax in zip(x, in_axes)) for x in xs], grid)
              for i in range(size)]
    for p in range(len(xs)):
        for k, g in enumerate(got[p]):
            want = np.stack([s[p][k] for s in slices])
            np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12,
                                       err_msg=f"vmap, process {p}, result {k}")


def _procs(rng, n, *shapes):
    return [tuple(_rand(rng, *s) for s in shapes) for _ in range(n)]


# ==========================================================================
# random numbers
# ==========================================================================

@pytest.mark.parametrize("algorithm,words,dtype,shape,axis", [
    ("THREE_FRY", 2, np.uint32, (5,), 0),
    ("THREE_FRY", 2, np.float64, (2, 3), 1),
    ("PHILOX", 2, np.uint64, (3,), 0),
    ("PHILOX", 3, np.uint8, (2, 2), 1),
    ("DEFAULT", 2, np.float32, (), 0),
])
def test_rng_bit_generator_vmap(algorithm, words, dtype, shape, axis):
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 2 ** 63, size=(3, words), dtype=np.uint64)
    keys = keys if axis == 0 else keys.T.copy()
    check_vmap(lambda k: lax.rng_bit_generator(k, shape, dtype, algorithm), [keys], axis)


def test_rng_bit_generator_vmap_jax_key_form():
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
    check_vmap(lambda k: lax.rng_bit_generator(k, (4,), np.uint32, "THREE_FRY"), [keys], 0)


def test_rng_bit_generator_has_no_derivative():
    key = np.array([7, 0], np.uint64)

    def f(x, k):
        bits = lax.rng_bit_generator(k, (3,), np.uint32)[1]
        return lax.reduce_sum(lax.mul(x, lax.convert_element_type(bits, np.float64)), (0,))

    x = np.ones(3)
    bits = np.asarray(lax.rng_bit_generator(key, (3,), np.uint32)[1], np.float64)
    gx, gk = grad(f, argnums=(0, 1), allow_int=True)(x, key)
    np.testing.assert_array_equal(gx, bits)
    assert gk.dtype == autodiff.float0 and gk.shape == (2,)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs.*u64"):
        grad(f, argnums=(0, 1))(x, key)  # as JAX: integer inputs need allow_int


def _check_rng_vmap(f, args, in_axes, seed=3):
    """vmap(f) equals a loop of per-element calls from the same generator state."""
    lax.seed_rng(seed)
    got = np.asarray(vmap(f, in_axes=in_axes)(*args))
    lax.seed_rng(seed)
    size = {np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None}.pop()
    want = np.stack([np.asarray(f(*(a if ax is None else a[i] for a, ax in zip(args, in_axes))))
                     for i in range(size)])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_rng_uniform_vmap(dtype, in_axes):
    rng = np.random.default_rng(1)
    if np.issubdtype(dtype, np.floating):
        a = rng.uniform(-3, 0, 4).astype(dtype)
        b = (a + rng.uniform(0.5, 3, 4)).astype(dtype)
    elif dtype == np.bool_:
        a, b = np.array([False, True, False, True]), np.array([True, True, False, False])
    else:
        a = rng.integers(0, 50, 4).astype(dtype)
        b = (a + rng.integers(1, 60, 4)).astype(dtype)
    args = [a if in_axes[0] is not None else a[0], b if in_axes[1] is not None else b[0]]
    _check_rng_vmap(lambda lo, hi: lax.rng_uniform(lo, hi, (2, 3)), args, in_axes)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_rng_uniform_vmap_stays_below_b(dtype):
    # [a, b) one ulp wide: the scaled draw rounds to b about half the time;
    # the result must then be the value just below b, which is a
    tiny = np.finfo(dtype).smallest_subnormal
    b = np.array([1, -1, 0, 3], dtype)
    a = np.nextafter(b, dtype(-np.inf)).astype(dtype)
    assert a[2] == -tiny
    lax.seed_rng(0)
    out = np.asarray(vmap(lambda lo, hi: lax.rng_uniform(lo, hi, (50,)))(a, b))
    np.testing.assert_array_equal(out, np.broadcast_to(a[:, None], out.shape))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 0)])
def test_rng_normal_vmap(dtype, in_axes):
    rng = np.random.default_rng(2)
    mu, sigma = rng.standard_normal(3).astype(dtype), rng.uniform(0.5, 2, 3).astype(dtype)
    args = [mu if in_axes[0] is not None else mu[0],
            sigma if in_axes[1] is not None else sigma[0]]
    _check_rng_vmap(lambda m, s: lax.rng_normal(m, s, (4,)), args, in_axes)


@pytest.mark.parametrize("op", [lax.rng_uniform, lax.rng_normal])
def test_rng_distributions_have_zero_derivative(op):
    # XLA's RngUniform/RngNormal values are implementation-defined: no
    # derivative with respect to the bounds (write a + (b - a) * u for one)
    def f(a, b):
        return lax.reduce_sum(op(a, b, (3,)), (0,))

    a, b = np.float64(0.5), np.float64(2.0)
    ga, gb = grad(f, argnums=(0, 1))(a, b)
    assert ga == 0 and gb == 0
    _, t = jvp(f, (a, b), (np.float64(1), np.float64(1)))
    assert t == 0


# ==========================================================================
# tokens and host transfers
# ==========================================================================

def test_infeed_after_all_vmap_and_grad():
    value = np.arange(6.0).reshape(2, 3)

    def f(x):
        token = lax.after_all(lax.create_token(), lax.create_token())
        fed, token = lax.infeed(token, value)
        return lax.mul(x, fed)

    xs = np.random.default_rng(0).standard_normal((4, 2, 3))
    lax.infeed_queue.clear()
    for _ in range(2 * (1 + 4) + 1):  # two check_vmaps (vmap, then 4 slices), one grad
        lax.infeed_queue.put(value)
    check_vmap(f, [xs], 0)
    check_vmap(f, [np.moveaxis(xs, 0, 2)], 2)
    g = grad(lambda x: lax.reduce_sum(f(x), (0, 1)))(xs[0])
    np.testing.assert_array_equal(g, value)
    assert len(lax.infeed_queue) == 0


@pytest.mark.parametrize("kind", ["outfeed", "send"])
@pytest.mark.parametrize("axis", [0, 1])
def test_outfeed_send_vmap_sends_each_element(kind, axis):
    queue = lax.outfeed_queue if kind == "outfeed" else lax.channels[11]
    queue.clear()

    def f(x, y):
        token = lax.create_token()
        token = (lax.outfeed(lax.sin(x), token) if kind == "outfeed"
                 else lax.send(lax.sin(x), token, 11))
        return lax.after_all(token), lax.add(x, y)   # an unbatched token out of vmap

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4)
    _, out = vmap(f, in_axes=(axis, None), out_axes=(None, 0))(x if axis == 0 else x.T.copy(), y)
    np.testing.assert_allclose(out, x + y)
    sent = [queue.get() for _ in range(3)]
    np.testing.assert_allclose(np.stack(sent), np.sin(x))
    assert len(queue) == 0


def test_send_recv_outfeed_pass_no_derivative():
    def f(x):
        token = lax.send(x, lax.create_token(), 12)
        received, token = lax.recv(token, abstractify(np.zeros(3)), 12)
        token = lax.outfeed(lax.mul(x, 3.0), token)
        return lax.add(lax.mul(x, x), received)

    rng = np.random.default_rng(0)
    x = rng.standard_normal(3)
    lax.outfeed_queue.clear()
    lax.channels[12].clear()
    # the value received is a constant: send passes no derivative
    out, t = jvp(f, (x,), (np.ones(3),))
    np.testing.assert_allclose(out, x * x + x)
    np.testing.assert_allclose(t, 2 * x)
    np.testing.assert_allclose(grad(lambda x: lax.reduce_sum(f(x), (0,)))(x), 2 * x)
    np.testing.assert_allclose(lax.outfeed_queue.get(), 3 * x)
    np.testing.assert_allclose(lax.outfeed_queue.get(), 3 * x)
    assert len(lax.channels[12]) == 0 and len(lax.outfeed_queue) == 0


@pytest.mark.parametrize("in_axes", [0, 1])
def test_recv_under_vmap(in_axes):
    c = np.arange(3.0)

    def f(x):
        token = lax.send(c, lax.create_token(), 13)
        received, _ = lax.recv(token, abstractify(c), 13)
        return lax.mul(x, received)

    check_vmap(f, [np.random.default_rng(0).standard_normal((3, 3))], in_axes)
    assert len(lax.channels[13]) == 0


# ==========================================================================
# custom_call and composite_call
# ==========================================================================

lax.register_custom_call_target("effects_test.scale", lambda x, y: (2 * x * y, np.sign(x)))
lax.register_custom_call_target("effects_test.count", lambda x: np.int32(np.sum(x > 0)))


def _scale(x, y):
    return lax.custom_call("effects_test.scale", [x, y],
                           [abstractify(x), abstractify(np.zeros(np.shape(x)))])


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 1)])
def test_custom_call_vmap_loops(in_axes):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 3) if in_axes[0] is not None else (3,))
    y = rng.standard_normal((3, 3) if in_axes[1] is not None else (3,))
    check_vmap(_scale, [x, y], in_axes)


def test_custom_call_derivative_is_an_error_naming_the_target():
    x, y = np.ones(3), np.ones(3)
    with pytest.raises(NotImplementedError, match="effects_test.scale"):
        grad(lambda x: lax.reduce_sum(_scale(x, y)[0], (0,)))(x)
    with pytest.raises(NotImplementedError, match="effects_test.scale"):
        jvp(lambda x: _scale(x, y)[0], (x,), (x,))


def test_custom_call_without_float_results_or_unused_is_fine():
    count = lambda x: lax.custom_call("effects_test.count", [x], abstractify(np.int32(0)))
    x = np.array([1.0, -2.0, 3.0])
    out, t = jvp(lambda x: (count(x), lax.sin(x)), (x,), (np.ones(3),))
    assert out[0] == 2 and t[0].dtype == autodiff.float0
    # the custom call's float result does not reach the output: no cotangent reaches it
    g = grad(lambda x: lax.add(lax.reduce_sum(lax.sin(x), (0,)),
                               lax.mul(0.0, lax.convert_element_type(
                                   _scale(x, x)[1][0] > 5, np.float64))))(x)
    np.testing.assert_allclose(g, np.cos(x))


def _composite(x, y):
    return lax.composite_call(lambda a, b: (lax.mul(lax.sin(a), b), lax.exp(lax.mul(a, b))),
                              x, y, name="effects_test.sinmul", attributes={"k": 1})


@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_composite_call_grads(shape):
    rng = np.random.default_rng(0)
    x, y = 0.5 * rng.standard_normal(shape), 0.5 * rng.standard_normal(shape)
    check_grads(_composite, (x, y), order=2, modes=("fwd", "rev"))


def test_composite_call_closing_over_a_value_grads():
    rng = np.random.default_rng(1)
    x, c = rng.standard_normal(4), rng.standard_normal(4)

    def f(x, c):
        return lax.composite_call(lambda a: lax.mul(lax.tanh(a), c), x, name="effects_test.cap")

    check_grads(f, (x, c), order=2, modes=("fwd", "rev"))


def test_composite_call_jit_grad():
    x = np.linspace(-1, 1, 5)
    f = lambda x: lax.reduce_sum(_composite(x, lax.mul(x, x))[0], (0,))
    np.testing.assert_allclose(np.asarray(compile.jit(grad(f))(x)),
                               np.asarray(grad(f)(x)), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(grad(f)(x)),
                               np.cos(x) * x ** 2 + 2 * x * np.sin(x), rtol=1e-12)


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 0)])
def test_composite_call_vmap(in_axes):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4) if in_axes[0] is not None else (4,))
    y = rng.standard_normal((3, 4) if in_axes[1] is not None else (4,))
    if in_axes[0] == 1:
        x = rng.standard_normal((4, 3))
    check_vmap(_composite, [x, y], in_axes)


# ==========================================================================
# optimization_barrier, tuple, get_tuple_element
# ==========================================================================

def _barrier(x, y):
    a, b, n = lax.optimization_barrier((lax.sin(x), lax.mul(x, y), np.int32(3)))
    return lax.add(lax.mul(a, b), lax.convert_element_type(n, np.float64))


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_optimization_barrier_grads(shape):
    rng = np.random.default_rng(0)
    check_grads(_barrier, (rng.standard_normal(shape), rng.standard_normal(shape)), order=2,
                modes=("fwd", "rev"))


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 0)])
def test_optimization_barrier_vmap(in_axes):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3)) if in_axes[0] is not None else rng.standard_normal(3)
    y = rng.standard_normal((2, 3)) if in_axes[1] is not None else rng.standard_normal(3)
    if in_axes == (1, None):
        x, y = rng.standard_normal((3, 2)), rng.standard_normal(3)
    check_vmap(_barrier, [x, y], in_axes)


def test_tuple_rules_are_structural():
    # the rules on their own (the interpreters do not carry tangents of
    # TUPLE-typed values yet: see the report)
    x, y, k = np.arange(3.0), np.ones((2, 2)), np.int32(4)
    tx = np.full(3, 0.5)
    out, t = jvp_rules[lax.side_effects.tuple_p]((x, y, k), (tx, Zero(abstractify(y)),
                                                             Zero(abstractify(k))))
    np.testing.assert_array_equal(t[0], tx)
    np.testing.assert_array_equal(t[1], np.zeros((2, 2)))
    assert t[2] == 0
    gte = lax.side_effects.get_tuple_element_p
    o, tt = jvp_rules[gte]((out,), (t,), index=0)
    np.testing.assert_array_equal(o, x)
    np.testing.assert_array_equal(tt, tx)
    o, tt = jvp_rules[gte]((out,), (t,), index=2)
    assert isinstance(tt, Zero)
    (ct,) = vjp_rules[gte](tx, Forward(x, (True,)), out, index=0)
    np.testing.assert_array_equal(ct[0], tx)
    np.testing.assert_array_equal(ct[1], np.zeros((2, 2)))
    cts = vjp_rules[lax.side_effects.tuple_p](ct, Forward(out, (True, True, False)), x, y, k)
    np.testing.assert_array_equal(cts[0], tx)
    assert cts[2] is None


def test_tuple_of_batched_values_under_vmap_is_a_clear_error():
    with pytest.raises(NotImplementedError, match="tuple: vmap"):
        vmap(lambda x: lax.get_tuple_element(lax.tuple([x]), 0))(np.ones((2, 3)))


def test_get_tuple_element_of_an_unbatched_tuple_under_vmap():
    rng = np.random.default_rng(0)
    c = rng.standard_normal(3)

    def f(x):
        t = lax.tuple([c, lax.create_token()])
        return lax.mul(x, lax.get_tuple_element(t, 0))

    check_vmap(f, [rng.standard_normal((2, 3))], 0)


# ==========================================================================
# collectives
# ==========================================================================

def _flat(x):
    return x if isinstance(x, tuple) else (x,)


ALL_REDUCE_CASES = [
    # (reduction, replica_groups, channel_id, use_global_device_ids, grid)
    (lax.add, None, None, False, (2, 1)),
    (lax.add, [[0, 2], [1, 3]], None, False, (4, 1)),
    (lax.max, [[0, 1], [2, 3]], None, False, (4, 1)),
    (lax.min, None, None, False, (3, 1)),
    (lax.add, [[0, 1]], 1, False, (2, 2)),
    (lax.max, [[0, 3], [1, 2]], 1, True, (2, 2)),
]


@pytest.mark.parametrize("reducer,groups,channel,global_ids,grid", ALL_REDUCE_CASES)
def test_all_reduce_grads(reducer, groups, channel, global_ids, grid):
    rng = np.random.default_rng(0)
    xs = _procs(rng, grid[0] * grid[1], (3,), (2, 2))

    def f(x, y):
        a, b = lax.all_reduce([lax.sin(x), lax.mul(y, y)], reducer, groups, channel, global_ids)
        return a, lax.mul(b, y)

    check_replicated_grads(f, xs, grid)


def test_all_reduce_max_ties_share_the_tangent():
    xs = [(np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),)]
    f = lambda x: (lax.all_reduce(x, lax.max),)
    ones = [(x[0], np.array([1.0, 1.0]) * (p + 1)) for p, x in enumerate(xs)]
    out = _run(lambda x, t: jvp(f, (x,), (t,))[1], ones, (2, 1))
    # element 0 ties: the mean of tangents 1 and 2; element 1: process 0 wins
    np.testing.assert_allclose(out[0][0], [1.5, 1.0])


def test_all_reduce_other_computation_is_an_error():
    def f(x):
        return (lax.all_reduce(x, lax.mul),)

    with pytest.raises(NotImplementedError, match="add, max and min"):
        _run(lambda x, t: jvp(f, (x,), (t,))[1], [(np.ones(2), np.ones(2))] * 2, (2, 1))


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 2)])
def test_all_reduce_vmap(in_axes):
    rng = np.random.default_rng(1)
    shapes = {0: (2, 3), 1: (3, 2), 2: (3, 1, 2), None: (3,)}
    xs = [tuple(_rand(rng, *shapes[a]) for a in in_axes) for _ in range(4)]

    def f(x, y):
        return tuple(lax.all_reduce([x, lax.reduce_sum(y, tuple(range(np.ndim(y))))],
                                    lax.max, [[0, 1], [2, 3]]))

    check_replicated_vmap(f, xs, (4, 1), in_axes)


AXIS_CASES = [
    # (dimension, replica_groups, channel_id, use_global_device_ids, grid, shard_count)
    (0, None, None, False, (2, 1), 2),
    (1, [[0, 1], [2, 3]], None, False, (4, 1), 2),
    (0, [[0], [1]], 1, False, (2, 2), 2),
    (1, [[1, 0], [3, 2]], 1, True, (2, 2), 2),
]


@pytest.mark.parametrize("dim,groups,channel,global_ids,grid,shards", AXIS_CASES)
def test_all_gather_grads(dim, groups, channel, global_ids, grid, shards):
    rng = np.random.default_rng(0)
    xs = _procs(rng, grid[0] * grid[1], (2, 3), (2, 2))

    def f(x, y):
        a, b = lax.all_gather([lax.sin(x), y], dim, shards, groups, channel, global_ids)
        return lax.mul(a, a), b

    check_replicated_grads(f, xs, grid)


@pytest.mark.parametrize("reducer", [lax.add, lax.max, lax.min])
@pytest.mark.parametrize("dim,groups,channel,global_ids,grid,shards", AXIS_CASES)
def test_reduce_scatter_grads(reducer, dim, groups, channel, global_ids, grid, shards):
    rng = np.random.default_rng(1)
    xs = _procs(rng, grid[0] * grid[1], (4, 4))

    def f(x):
        (a,) = lax.reduce_scatter([lax.mul(x, x)], reducer, dim, shards, groups, channel,
                                  global_ids)
        return (lax.sin(a),)

    check_replicated_grads(f, xs, grid)


@pytest.mark.parametrize("split,concat,groups,grid", [
    (0, 1, None, (2, 1)),
    (1, 0, [[0, 1], [2, 3]], (4, 1)),
    (1, 1, [[0, 2, 1, 3]], (4, 1)),
])
def test_all_to_all_grads(split, concat, groups, grid):
    rng = np.random.default_rng(2)
    count = len(groups[0]) if groups else grid[0]
    xs = _procs(rng, grid[0] * grid[1], (4, 4), (4, 4))

    def f(x, y):
        a, b = lax.all_to_all([lax.sin(x), y], split, concat, count, groups)
        return lax.mul(a, b), b

    check_replicated_grads(f, xs, grid)


@pytest.mark.parametrize("pairs,channel,grid", [
    ([(0, 1), (1, 2), (2, 0)], None, (3, 1)),
    ([(0, 2), (3, 1)], None, (4, 1)),
    ([(1, 0)], 1, (2, 2)),
])
def test_collective_permute_grads(pairs, channel, grid):
    rng = np.random.default_rng(3)
    xs = _procs(rng, grid[0] * grid[1], (2, 3))
    f = lambda x: (lax.mul(lax.collective_permute(lax.sin(x), pairs, channel), x),)
    check_replicated_grads(f, xs, grid)


@pytest.mark.parametrize("groups,channel,grid", [
    (None, None, (3, 1)),
    ([[2, 0], [1]], None, (4, 1)),
    ([[1, 0]], 1, (2, 2)),
    (None, None, (2, 2)),
])
def test_collective_broadcast_grads(groups, channel, grid):
    rng = np.random.default_rng(4)
    xs = _procs(rng, grid[0] * grid[1], (3,))
    f = lambda x: (lax.mul(lax.collective_broadcast(lax.sin(x), groups, channel), x),)
    check_replicated_grads(f, xs, grid)


def test_collective_broadcast_cross_partition_without_groups_vjp_is_an_error():
    f = lambda x: lax.collective_broadcast(x, None, 1)
    with pytest.raises(NotImplementedError, match="replica_groups explicitly"):
        _run(lambda x: vjp(f, x)[1](x), [(np.ones(2),)] * 2, (1, 2))


@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter", "all_to_all", "permute",
                                "broadcast"])
@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 2), (2, 1)])
def test_collectives_vmap(op, in_axes):
    rng = np.random.default_rng(5)
    base = (2, 4)   # per element: two operands of this shape

    def shape(ax):
        s = list(base)
        if ax is not None:
            s.insert(ax, 3)
        return tuple(s)

    xs = [tuple(_rand(rng, *shape(a)) for a in in_axes) for _ in range(4)]
    groups = [[0, 1], [2, 3]]
    fns = {
        "all_gather": lambda x, y: tuple(lax.all_gather([x, y], 1, 2, groups)),
        "reduce_scatter": lambda x, y: tuple(lax.reduce_scatter([x, y], lax.add, 1, 2, groups)),
        "all_to_all": lambda x, y: tuple(lax.all_to_all([x, y], 1, 0, 2, groups)),
        "permute": lambda x, y: (lax.collective_permute(lax.add(x, y), [(0, 3), (3, 1)]),),
        "broadcast": lambda x, y: (lax.collective_broadcast(lax.mul(x, y), [[1, 2]]),),
    }
    check_replicated_vmap(fns[op], xs, (4, 1), in_axes)


def test_replica_and_partition_id_vmap_and_grads():
    rng = np.random.default_rng(6)
    xs = _procs(rng, 4, (3,))

    def f(x):
        r = lax.convert_element_type(lax.replica_id(), np.float64)
        p = lax.convert_element_type(lax.partition_id(), np.float64)
        return (lax.mul(lax.mul(x, x), lax.add(r, lax.mul(p, 10.0))),)

    check_replicated_grads(f, xs, (2, 2))
    check_replicated_vmap(f, [(rng.standard_normal((2, 3)),) for _ in range(4)], (2, 2), (0,))
    g = _run(lambda x: (grad(lambda x: lax.reduce_sum(f(x)[0], (0,)))(x),), xs, (2, 2))
    for i, (x,) in enumerate(xs):
        np.testing.assert_allclose(g[i][0], 2 * x * (i // 2 + 10 * (i % 2)))


def test_collective_grads_single_process_eager():
    # outside run_replicated: a program of one process
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3))
    check_grads(lambda x: lax.all_reduce(lax.sin(x), lax.add), (x,), order=2)
    check_grads(lambda x: lax.all_gather(lax.sin(x), 1, 1, [[0]]), (x,), order=2)
    check_vmap(lambda x: lax.all_reduce(x, lax.max), [x], 1)
