"""Derivatives and batching of the control-flow ops: conditional (cond,
switch, conditional), while (while_loop, fori_loop with traced bounds), scan
(scan, fori_loop with static bounds, map_sequential), call and XLA's map.

Derivatives are checked against finite differences (``check_grads``, order 2
in float64), batching against stacking the function over slices
(``check_vmap``)."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import check_grads, grad, jvp, vmap
from numxla.compile import jit
from tests.autodiff.util import _rng, check_vmap
from numxla.tracer import make_graph

BOTH = ("fwd", "rev")


def _normal(rng, *shape):
    return rng.standard_normal(shape)


def _arg(rng, shape, axis, size=3):
    """A random float64 argument of logical ``shape``, batched (of ``size``)
    at ``axis`` unless ``axis`` is None."""
    if axis is None:
        return _normal(rng, *shape)
    return np.moveaxis(_normal(rng, size, *shape), 0, axis)


def _check(f, args, modes=("fwd", "rev")):
    """``check_grads`` to order 2 (integer results included: their tangents
    and cotangents are float0)."""
    check_grads(f, args, order=2, modes=modes)


# --------------------------------------------------------------------------
# conditional
# --------------------------------------------------------------------------

def _cond_fn(p, x, w):
    """Branches over a pytree operand, closing over ``w`` (a captured value),
    returning a pytree with an integer leaf."""
    def true_fun(d):
        return {"y": lax.sin(d["a"]) * w, "n": np.int32(1)}, d["b"] * d["a"]

    def false_fun(d):
        return {"y": lax.cos(d["a"]) + d["b"], "n": np.int32(2)}, lax.exp(d["a"]) * w * w
    return lax.cond(p, true_fun, false_fun, {"a": x, "b": w})


@pytest.mark.parametrize("pred", [True, False])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_cond_grads(pred, shape):
    rng = _rng(len(shape) + 10 * pred)
    x, w = _normal(rng, *shape), _normal(rng, *shape)
    _check(lambda x, w: _cond_fn(np.bool_(pred), x, w), (x, w))


@pytest.mark.parametrize("index", [0, 1, 2, -1, 7])   # out of range: clamped (JAX)
def test_switch_grads(index):
    rng = _rng(index + 3)
    x, w = _normal(rng, 4), _normal(rng, 4)

    def f(x, w):
        return lax.switch(np.int32(index),
                          [lambda a, b: a * b, lambda a, b: lax.sin(a) + w,
                           lambda a, b: (lax.tanh(a) * b) * w], x, w)
    check_grads(f, (x, w), order=2, modes=BOTH)


def test_conditional_with_one_operand_per_branch_grads():
    rng = _rng(5)
    x, y = _normal(rng, 3), _normal(rng, 2, 3)

    def f(x, y):
        return lax.conditional(np.int32(1), [lambda a: a * a, lambda t: lax.sin(t[0]) * t[1][0]],
                               [x, (x, y)])
    check_grads(f, (x, y), order=2, modes=BOTH)


def test_cond_tangent_only_in_one_branch():
    # the true branch ignores x: its tangent is zeros there, nonzero in the other
    x = np.array([0.5, -1.0])
    for p in (True, False):
        f = lambda x: lax.cond(np.bool_(p), lambda a: np.ones(2), lambda a: a * a, x)
        check_grads(f, (x,), order=2, modes=BOTH)
    _, t = jvp(lambda x: lax.cond(np.bool_(True), lambda a: np.ones(2), lambda a: a * a, x),
               (x,), (np.ones(2),))
    np.testing.assert_array_equal(t, [0.0, 0.0])


@pytest.mark.parametrize("in_axes", [(None, 0, 0), (None, 1, None), (None, None, 1)])
def test_cond_vmap_unbatched_predicate(in_axes):
    rng = _rng(7)
    x, w = _arg(rng, (3,), in_axes[1]), _arg(rng, (3,), in_axes[2])
    for p in (True, False):
        check_vmap(lambda p, x, w: _cond_fn(p, x, w), (np.bool_(p), x, w), in_axes=in_axes)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (0, 1, None), (0, None, None)])
def test_cond_vmap_batched_predicate(in_axes):
    rng = _rng(8)
    p = np.array([True, False, False, True])
    x, w = _arg(rng, (2,), in_axes[1], 4), _arg(rng, (2,), in_axes[2], 4)
    check_vmap(_cond_fn, (p, x, w), in_axes=in_axes)


@pytest.mark.parametrize("in_axes", [(0, 0), (0, None), (None, 1)])
def test_switch_vmap(in_axes):
    rng = _rng(9)
    index = np.array([0, 2, 1, -3, 9], np.int32)      # out of range: clamped
    x = _arg(rng, (2,), in_axes[1], 5)
    if in_axes[0] is None:
        index = np.int32(1)

    def f(i, x):
        return lax.switch(i, [lambda a: lax.sin(a), lambda a: a * 2.0,
                              lambda a: lax.reduce_sum(a, (0,)) + a], x)
    check_vmap(f, (index, x), in_axes=in_axes)


def test_grad_of_vmapped_cond_with_batched_predicate():
    rng = _rng(11)
    p = np.array([True, False, True])
    x = _normal(rng, 3, 2)
    f = lambda x: vmap(lambda p, x: lax.cond(p, lax.sin, lax.cos, x))(p, x)
    check_grads(f, (x,), order=2, modes=BOTH)


# --------------------------------------------------------------------------
# scan
# --------------------------------------------------------------------------

def _scan_fn(init, xs, w, reverse=False):
    """Carries (a pytree with an integer counter), xs (a pytree), a captured
    const ``w``; ys depend on the carry and the slice."""
    def body(carry, x):
        i, c = carry
        c2 = lax.sin(c["h"]) * w + x["u"] * c["g"]
        g2 = c["g"] * lax.tanh(x["v"])
        y = c2 * c["g"] + lax.convert_element_type(i, np.float64)
        return (i + 1, {"h": c2, "g": g2}), {"y": y, "i": i}
    return lax.scan(body, (np.int32(0), init), xs, reverse=reverse)


@pytest.mark.parametrize("n, reverse", [(3, False), (4, True), (1, False), (0, False)])
@pytest.mark.parametrize("shape", [(), (2,)])
def test_scan_grads(n, reverse, shape):
    rng = _rng(n + 5 * reverse + len(shape))
    init = {"h": _normal(rng, *shape), "g": _normal(rng, *shape)}
    xs = {"u": _normal(rng, n, *shape), "v": _normal(rng, n, *shape)}
    w = _normal(rng, *shape)
    _check(lambda init, xs, w: _scan_fn(init, xs, w, reverse), (init, xs, w))


def test_scan_carry_tangent_appears_after_the_first_iteration():
    # the carry starts constant; only w (a const) is differentiated: the
    # carry's tangent is zero on entry and nonzero after one iteration
    xs = np.array([0.3, -0.7, 1.1])

    def f(w):
        return lax.scan(lambda c, x: (c * x + w, c * w), np.float64(1.0), xs)
    check_grads(f, (np.float64(0.4),), order=2, modes=BOTH)


def test_map_sequential_grads():
    rng = _rng(12)
    xs, w = _normal(rng, 3, 2), _normal(rng, 2)
    check_grads(lambda xs, w: lax.map_sequential(lambda x: lax.sin(x) * w, xs), (xs, w),
                order=2, modes=BOTH)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (1, None, None), (None, 1, None),
                                     (None, None, 0), (None, 2, 1)])
def test_scan_vmap(in_axes):
    rng = _rng(13)
    init, xs, w = (_arg(rng, s, a) for s, a in zip([(2,), (4, 2), (2,)], in_axes))

    def f(init, xs, w):
        return _scan_fn({"h": init, "g": init * 0.5}, {"u": xs, "v": xs * w}, w,
                        reverse=in_axes[0] == 1)
    check_vmap(f, (init, xs, w), in_axes=in_axes)


def test_scan_vmap_carry_becomes_batched():
    # the carry starts unbatched; the batched xs make it batched (fixed point)
    rng = _rng(14)
    xs = _normal(rng, 3, 5)
    f = lambda xs: lax.scan(lambda c, x: (c * 0.5 + x, c), np.float64(1.0), xs)
    check_vmap(f, (xs,), in_axes=1)
    check_vmap(f, (xs.T,), in_axes=0)


# --------------------------------------------------------------------------
# fori_loop: static bounds are a scan (reverse mode works), traced a While
# --------------------------------------------------------------------------

def _fori_body(w):
    return lambda i, v: (lax.sin(v[0]) * w + lax.convert_element_type(i, np.float64),
                         v[1] * v[0])


@pytest.mark.parametrize("lower, upper", [(0, 3), (2, 4), (5, 2)])
def test_fori_loop_static_bounds_grads(lower, upper):
    rng = _rng(lower + upper)
    x, y, w = _normal(rng, 3), _normal(rng, 3), _normal(rng, 3)
    check_grads(lambda x, y, w: lax.fori_loop(lower, upper, _fori_body(w), (x, y)), (x, y, w),
                order=2, modes=BOTH)


def test_fori_loop_static_bounds_is_a_scan():
    x = np.array([0.5, 1.5])
    f = lambda x: lax.reduce_sum(lax.fori_loop(0, 3, lambda i, v: lax.sin(v) * v, x), (0,))
    for fn in (f, grad(f)):
        text = make_graph(fn)(x).as_text()
        assert "scan(" in text and "while(" not in text, text
    traced = make_graph(lambda n, x: lax.fori_loop(0, n, lambda i, v: lax.sin(v), x))(
        np.int32(3), x).as_text()
    assert "while(" in traced and "scan(" not in traced


def test_fori_loop_traced_bounds_forward_mode():
    # per-element (batched, so traced) bounds: a While with a batched predicate
    rng = _rng(15)
    x, w = _normal(rng, 4, 2), _normal(rng, 2)
    uppers = np.array([0, 1, 3, 2], np.int32)

    def f(x, w):
        return vmap(lambda n, x: lax.fori_loop(0, n, _fori_body(w), (x, w)))(uppers, x)
    assert "while(" in make_graph(f)(x, w).as_text()
    check_grads(f, (x, w), order=2, modes=("fwd",))


def test_fori_loop_vmap():
    rng = _rng(16)
    x, w = _normal(rng, 4, 3), _normal(rng, 3, 4)
    check_vmap(lambda x, w: lax.fori_loop(1, 4, _fori_body(w), (x, x)), (x, w), in_axes=(0, 1))
    check_vmap(lambda x, w: lax.fori_loop(1, 4, _fori_body(w), (x, x)), (x, w[:, 0]),
               in_axes=(0, None))
    uppers = np.array([3, 0, 1, 4], np.int32)
    check_vmap(lambda n, x, w: lax.fori_loop(1, n, _fori_body(w), (x, x)), (uppers, x, w),
               in_axes=(0, 0, 1))


# --------------------------------------------------------------------------
# while_loop: forward mode only
# --------------------------------------------------------------------------

def _while_fn(x, w, limit=3.0):
    """Loop until the counter passes ``limit``; the body and the condition
    close over values; the carry is a pytree with an integer."""
    def cond(c):
        return lax.lt(c["t"], limit)

    def body(c):
        return {"t": c["t"] + 1.0, "k": c["k"] + 1, "x": lax.sin(c["x"]) * w + c["x"]}
    return lax.while_loop(cond, body, {"t": np.float64(0.0), "k": np.int32(0), "x": x})


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_while_loop_forward_mode(shape):
    rng = _rng(17 + len(shape))
    x, w = _normal(rng, *shape), _normal(rng, *shape)
    _check(_while_fn, (x, w), modes=("fwd",))


def test_while_loop_carry_tangent_appears_after_the_first_iteration():
    f = lambda w: lax.while_loop(lambda c: lax.lt(c[0], 4), lambda c: (c[0] + 1, c[1] * w + w),
                                 (0, np.float64(1.0)))[1]
    check_grads(f, (np.float64(0.7),), order=2, modes=("fwd",))


def test_while_loop_reverse_mode_raises_a_clear_error():
    x = np.array([0.5, 1.0])
    f = lambda x: lax.reduce_sum(_while_fn(x, x)["x"], (0,))
    with pytest.raises(NotImplementedError,
                       match=r"Reverse-mode differentiation of while_loop is not supported.*"
                             r"fori_loop with static.*bounds, or scan"):
        grad(f)(x)


@pytest.mark.parametrize("in_axes", [(0, 0), (1, None), (None, 0)])
def test_while_vmap_unbatched_predicate(in_axes):
    rng = _rng(18)
    x, w = _arg(rng, (2,), in_axes[0]), _arg(rng, (2,), in_axes[1])
    check_vmap(_while_fn, (x, w), in_axes=in_axes)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (0, None, 1), (0, 1, None)])
def test_while_vmap_batched_predicate(in_axes):
    # different trip counts per element: 0, 1, 3 and 6 iterations
    rng = _rng(19)
    limit = np.array([0.0, 0.5, 3.0, 5.5])
    x, w = _arg(rng, (2,), in_axes[1], 4), _arg(rng, (2,), in_axes[2], 4)
    check_vmap(lambda lim, x, w: _while_fn(x, w, lim), (limit, x, w), in_axes=in_axes)


def test_while_vmap_predicate_on_a_batched_carry():
    # the counter starts unbatched and the bound is per element
    x = np.array([3.0, -1.0, 10.0])
    f = lambda x: lax.while_loop(lambda c: lax.lt(c[1], x), lambda c: (c[0] + 1, c[1] * 2.0 + 1),
                                 (np.int32(0), np.float64(0.5)))
    check_vmap(f, (x,))


# --------------------------------------------------------------------------
# call
# --------------------------------------------------------------------------

def _call_fn(x, y, w):
    def callee(a, t):
        return {"s": lax.sin(a) * t[0] + w, "n": np.int32(3)}, lax.exp(t[1]) * a
    return lax.call(callee, x, (y, y * x))


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_call_grads(shape):
    rng = _rng(20 + len(shape))
    args = tuple(_normal(rng, *shape) for _ in range(3))
    _check(_call_fn, args)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (1, None, 0), (None, None, 1)])
def test_call_vmap(in_axes):
    rng = _rng(21)
    args = tuple(_arg(rng, (2,), a) for a in in_axes)
    check_vmap(_call_fn, args, in_axes=in_axes)


# --------------------------------------------------------------------------
# map (XLA's: a scalar computation element-wise)
# --------------------------------------------------------------------------

def _map_fn(x, y, s):
    """Two mapped operands, a captured scalar ``s`` (a static operand), two results."""
    return lax.map([x, y], lambda a, b: (lax.sin(a) * b + s, lax.exp(a * s) - b))


@pytest.mark.parametrize("shape", [(3,), (2, 3), ()])
def test_map_grads(shape):
    rng = _rng(22 + len(shape))
    x, y, s = _normal(rng, *shape), _normal(rng, *shape), _normal(rng)
    check_grads(_map_fn, (x, y, s), order=2, modes=BOTH)


def test_map_grads_with_an_array_static_operand():
    rng = _rng(23)
    x, v = _normal(rng, 2, 3), _normal(rng, 4)
    f = lambda x, v: lax.map([x], lambda a: lax.sin(a) * lax.reduce_sum(v * v, (0,)))
    check_grads(f, (x, v), order=2, modes=BOTH)


@pytest.mark.parametrize("in_axes", [(0, 0, None), (1, None, None), (None, 0, 0), (1, 0, 0)])
def test_map_vmap(in_axes):
    rng = _rng(24)
    x, y, s = _arg(rng, (2,), in_axes[0]), _arg(rng, (2,), in_axes[1]), _arg(rng, (), in_axes[2])
    check_vmap(_map_fn, (x, y, s), in_axes=in_axes)


def test_map_vmap_with_a_batched_array_static_operand():
    # no element-wise form: one map per batch element
    rng = _rng(25)
    x, v = _normal(rng, 3, 2), _normal(rng, 4, 3)
    f = lambda x, v: lax.map([x], lambda a: lax.sin(a) * lax.reduce_sum(v, (0,)))
    check_vmap(f, (x, v), in_axes=(0, 1))
    check_vmap(f, (x[0], v), in_axes=(None, 1))


# --------------------------------------------------------------------------
# composition
# --------------------------------------------------------------------------

def test_vmap_of_grad_and_grad_of_vmap_of_scan():
    rng = _rng(26)
    xs, w = _normal(rng, 4, 3), _normal(rng, 3)

    def loss(w, xs):
        carry, ys = lax.scan(lambda c, x: (lax.sin(c) * w + x, c * x), np.float64(0.5), xs)
        return carry + lax.reduce_sum(ys, (0,))
    check_vmap(grad(loss), (w, xs), in_axes=(0, 1))
    check_grads(lambda w, xs: vmap(loss, in_axes=(0, 1))(w, xs), (w, xs), order=1, modes=BOTH)


def test_jit_of_grad_of_a_fori_loop():
    x = np.array([0.2, -0.4, 1.3])
    f = lambda x: lax.reduce_sum(lax.fori_loop(0, 4, lambda i, v: lax.sin(v) * v + 0.5, x), (0,))
    np.testing.assert_allclose(jit(grad(f))(x), grad(f)(x), rtol=1e-12)
