"""Compiled control flow (compile/lowering/control_flow.py) against the reference
semantics: while (swapped carries, captured values, nested loops, zero
iterations, fori_loop), conditional (pred, in-range, negative and too-large
indices, branches returning operands and literals), scan (forward, reverse,
several carries and xs, length 0), call and XLA's map (scalar computations
and one with array ops inside), for int, float, complex and bool values, with
parameters and intermediate values in non-default layouts, and no result
sharing an input's buffer.

Numba compiles slowly, so each test jits one function holding many checks
and calls it on several inputs."""
from __future__ import annotations

import functools

import numpy as np

import numxla.compile.lowering.control_flow  # noqa: F401  (registers the lowerings)
import numxla.primitives as lax
from numxla.compile import device_put, jit

from . import util
from .util import column_major, padded, relaid, repeated_tiles, tiled

rng = np.random.default_rng(11)
assert_close = functools.partial(util.check_all, tol=1e-6)
# for relaid (which re-lays out the outer graph's values: every op converts
# between its operands' layouts and its computations')
LAYOUTS = [column_major, tiled, padded(1), repeated_tiles]


# --------------------------------------------------------------------------
# While
# --------------------------------------------------------------------------

def loops(x, y, z, b, n):
    """x: f32[3,4], y: s32[4], z: c64[2,3], b: bool[3], n: s32[]."""
    def body(c):
        i, a, other, zc, bo, yy = c
        # swapped carries, captured x and z, a bool and an int carry
        return i + 1, other, a * 2.0 + x, zc * z + (1 + 2j), lax.bitwise_not(bo), yy * 3 - i

    w1 = lax.while_loop(lambda c: c[0] < n, body, (0, x, x * 0.5, z, b, y))

    # nested: the inner loop's bound is the outer carry
    def outer(c):
        i, acc = c
        _, inner = lax.while_loop(lambda d: d[0] < i, lambda d: (d[0] + 1, d[1] + d[0]),
                                  (0, acc))
        return i + 1, inner

    w2 = lax.while_loop(lambda c: c[0] < n, outer, (0, y))
    # fori_loop with a float carry, and a loop whose body returns a captured value
    w3 = lax.fori_loop(0, n, lambda i, v: v * 1.5 + lax.convert_element_type(i, np.float32), x)
    w4 = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, y), (0, y * 2))
    # the condition returns a carried pred directly
    w5 = lax.while_loop(lambda c: c[1], lambda c: (c[0] + 1, c[0] < n), (0, n > 0))
    return w1, w2, w3, w4, w5


def _loop_args(n):
    return (rng.standard_normal((3, 4)).astype(np.float32), np.arange(4, dtype=np.int32) - 1,
            (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(np.complex64),
            np.array([True, False, True]), np.int32(n))


def test_while_loops():
    compiled = jit(loops)
    for n in (0, 1, 4, -3):
        args = _loop_args(n)
        assert_close(compiled(*args), loops(*args), f"n={n}")
    assert compiled.cache_size() == 1


def test_while_in_other_layouts():
    args = _loop_args(3)
    compiled = relaid(loops, args, layouts=LAYOUTS)
    assert_close(compiled(*args), loops(*args))
    tiled = device_put(args[0], compiled.graph.in_avals[0].shape.layout)  # an Array argument
    assert_close(compiled(tiled, *args[1:]), loops(*args), "device_put")


# --------------------------------------------------------------------------
# Conditional
# --------------------------------------------------------------------------

def branches(x, y, z, p, k):
    """x: f32[3,4], y: s32[4], z: c64[2,3], p: pred[], k: s32[]."""
    c1 = lax.cond(p, lambda a, b: (a + 1.0, b * 2), lambda a, b: (a * a, b - 1), x, y)
    # the same branch functions on different operands per branch; literal results
    c2 = lax.conditional(p, [lambda a: (a * 2.0, 7), lambda b: (b[0] + b[1], 9)],
                         [x, (x, x)])
    s1 = lax.switch(k, [lambda a, c: (a + 1, c), lambda a, c: (a * 2, c * c),
                        lambda a, c: (a - 5, c + (1 + 1j))], y, z)
    # a branch returning its operand unchanged; a bool result; one branch only
    s2 = lax.switch(k, [lambda a: a, lambda a: a * 3.0], x)
    s3 = lax.switch(k, [lambda a: a > 0], y)
    # captured outer values and a nested conditional
    s4 = lax.cond(p, lambda a: lax.switch(k, [lambda u: u + x, lambda u: u * x], a),
                  lambda a: a - x, x * 0.5)
    return c1, c2, s1, s2, s3, s4


def test_conditionals():
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = np.arange(4, dtype=np.int32) - 2
    z = (rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))).astype(np.complex64)
    compiled = jit(branches)
    for p in (True, False):
        for k in (0, 1, 2, 3, -1, 2 ** 31 - 1):
            args = (x, y, z, np.bool_(p), np.int32(k))
            got = compiled(*args)
            assert_close(got, branches(*args), f"p={p} k={k}")
            # a result that is an operand comes back in a buffer of its own
            assert not np.shares_memory(np.asarray(got[3]), x)
    relaid_fn = relaid(branches, (x, y, z, np.bool_(True), np.int32(1)), layouts=LAYOUTS)
    for p, k in ((True, 1), (False, 0), (True, 5)):
        args = (x, y, z, np.bool_(p), np.int32(k))
        assert_close(relaid_fn(*args), branches(*args), f"relaid p={p} k={k}")


# --------------------------------------------------------------------------
# Scan, Call, Map
# --------------------------------------------------------------------------

def scans(xs, ys, c0, w, h):
    """xs: f32[5,3], ys: s32[5,2,2], c0: f32[3], w: f32[3], h: f16[4,3]."""
    def step(c, x):
        a, n = c
        x1, x2 = x
        return (a * w + x1, n + x2[0, 0]), (a + 1.0, x2 * n, x1 > 0)

    fwd = lax.scan(step, (c0, np.int32(1)), (xs, ys))
    rev = lax.scan(step, (c0, np.int32(1)), (xs, ys), reverse=True)
    # no xs: length only; a carry the body passes through unchanged
    cnt = lax.scan(lambda c, _: ((c[0] + 1, c[1]), c[0] * 2), (np.int32(0), w), None, length=4)
    # length 0
    empty = lax.scan(lambda c, x: (c + x, c * x), c0, xs[:0])
    mapped = lax.map_sequential(lambda x: x * 2.0 + w, xs)
    # 16-bit floats carried and stacked
    half = lax.scan(lambda c, x: (c + x, c), h[0], h)
    return fwd, rev, cnt, empty, mapped, half


def test_scan():
    args = (rng.standard_normal((5, 3)).astype(np.float32),
            rng.integers(-3, 4, (5, 2, 2)).astype(np.int32),
            rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32),
            rng.standard_normal((4, 3)).astype(np.float16))
    assert_close(jit(scans)(*args), scans(*args))
    assert_close(relaid(scans, args, layouts=LAYOUTS)(*args), scans(*args), "relaid")


def calls_and_maps(x, y, z, k):
    """x: f32[3,4], y: f32[3,4], z: c128[2,2], k: s32[]."""
    c1 = lax.call(lambda a, b, s: (a * b + s, a, 3), x, y, 2.0)       # returns an operand
    c2 = lax.call(lambda a: lax.call(lambda b: b + x, a) * 2.0, y)      # nested, captures x
    c3 = lax.composite_call(lambda a, b: a - b, x, y, name="my.sub")
    m1 = lax.map([x, y], lambda a, b: a * b + 1.0)
    m2 = lax.map([x, y], lambda a, b: (lax.max(a, b), a > b, a + 1.0))  # several results
    m3 = lax.map([z], lambda a: a * a + (1 - 1j))
    m4 = lax.map([y], lambda a: a + lax.reduce_sum(x, (0, 1)))        # array ops inside
    m5 = lax.map([x], lambda a: a * lax.convert_element_type(k, np.float32))  # captured scalar
    return c1, c2, c3, m1, m2, m3, m4, m5


def test_call_and_map():
    import numxla.compile.lowering.side_effects  # noqa: F401  (composite_call)
    args = (rng.standard_normal((3, 4)).astype(np.float32),
            rng.standard_normal((3, 4)).astype(np.float32),
            (rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))), np.int32(2))
    got = jit(calls_and_maps)(*args)
    assert_close(got, calls_and_maps(*args))
    assert not np.shares_memory(np.asarray(got[0][1]), args[0])
    tiled = jit(calls_and_maps, in_layouts=("{0,1}", "{0,1:T(2,2)}", None, None))
    assert_close(tiled(*args), calls_and_maps(*args), "layouts")


def test_no_result_shares_an_input_buffer():
    def f(x, n):
        zero_trips = lax.while_loop(lambda c: c[0] < 0, lambda c: (c[0] + 1, c[1] * 2.0),
                                    (n, x))[1]
        same = lax.cond(n > 100, lambda a: a + 1.0, lambda a: a, x)
        called = lax.call(lambda a: a, x)
        return zero_trips, same, called

    x = np.ones((2, 3), np.float32)
    for out in jit(f)(x, np.int32(0)):
        assert not np.shares_memory(np.asarray(out), x)
        np.testing.assert_array_equal(np.asarray(out), x)
