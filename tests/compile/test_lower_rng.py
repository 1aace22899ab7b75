"""Compiled random numbers (compile/lowering/rng.py): rng_bit_generator bit for
bit equal to the reference (THREE_FRY and PHILOX, 2- and 3-word states,
JAX's u32 key form, 8- to 64-bit integer and float outputs, odd split
dimensions, scalars, empty shapes, counters wrapping around 2**64, keys and
results in non-default layouts); rng_uniform and rng_normal: ranges, moments
and seeding.

Numba compiles slowly, so each test jits one function holding many checks."""
from __future__ import annotations

import numpy as np

import numxla.compile  # noqa: F401
import numxla.compile.kernels.random_bits as krng
import numxla.primitives as lax
from numxla.compile import device_put, jit
from numxla.tracer import pytree
from numxla.tracer.shapes import PrimitiveType

# (algorithm, dtype, shape)
BIT_CASES = [
    ("THREE_FRY", np.uint32, (3, 5)), ("THREE_FRY", np.uint64, (2, 3)),
    ("THREE_FRY", np.int8, (5, 3)), ("THREE_FRY", np.float32, (7,)),
    ("THREE_FRY", np.int16, (2, 3, 3)), ("THREE_FRY", np.float64, ()),
    ("THREE_FRY", np.uint32, ()), ("THREE_FRY", np.uint8, (0, 3)),
    ("PHILOX", np.uint32, (3, 5)), ("PHILOX", np.uint64, (3,)),
    ("PHILOX", np.float32, (2, 3, 2)), ("PHILOX", np.int64, (5, 1)),
    ("PHILOX", np.uint16, (7,)), ("PHILOX", np.uint8, ()),
    ("DEFAULT", np.int32, (4, 4)), ("THREE_FRY", np.float16, (3, 3)),
    ("PHILOX", PrimitiveType.BF16, (5,)),
]


def bits(k2, k3, k4):
    """k2: u64[2], k3: u64[3], k4: u32[4] (JAX's key form)."""
    out = []
    for alg, dtype, shape in BIT_CASES:
        out.append(lax.rng_bit_generator(k2, shape, dtype, alg))
        if alg != "THREE_FRY":
            out.append(lax.rng_bit_generator(k3, shape, dtype, alg))
    out.append(lax.rng_bit_generator(k4, (3, 3), np.uint32, "THREE_FRY"))
    # chained: the new state feeds the next generator
    state, first = lax.rng_bit_generator(k2, (4,), np.uint32, "PHILOX")
    out.append((first, lax.rng_bit_generator(state, (4,), np.uint32, "PHILOX")))
    return out


KEYS = [  # counters about to wrap around 2**64, and small ones
    (np.array([2 ** 64 - 3, 2 ** 64 - 5], np.uint64),
     np.array([12345, 2 ** 64 - 2, 2 ** 64 - 1], np.uint64),
     np.array([1, 4, 0, 1], np.uint32)),
    (np.array([1, 2], np.uint64), np.array([7, 0, 3], np.uint64),
     np.array([0xDEADBEEF, 7, 2 ** 32 - 1, 0], np.uint32)),
]


def assert_bits(got, want, where=""):
    got_leaves, want_leaves = pytree.tree_leaves(got), pytree.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, f"{where} leaf {i}"
        assert g.tobytes() == w.tobytes(), f"{where} leaf {i}: {g} != {w}"


def test_rng_bit_generator_exact_bits():
    compiled = jit(bits)
    for keys in KEYS:
        assert_bits(compiled(*keys), bits(*keys), f"keys {keys[0]}")


def test_rng_bit_generator_layouts():
    def f(k2, k3):
        return (lax.rng_bit_generator(k2, (5, 4), np.uint32, "THREE_FRY"),
                lax.rng_bit_generator(k3, (3, 5), np.float32, "PHILOX"))

    k2, k3, _ = KEYS[0]
    compiled = jit(f, in_layouts=("{0:T(2)}", "{0:T(2)}"),
                   out_layouts=("{0}", "{0,1:T(2,2)}", "{0}", "{0,1}"))
    assert_bits(compiled(device_put(k2, "{0:T(2)}"), k3), f(k2, k3))


def distributions(fa, fb, ia, ib, ua, ub, mu, sigma):
    n = (200, 50)
    return (lax.rng_uniform(fa, fb, n), lax.rng_uniform(ia, ib, n), lax.rng_uniform(ua, ub, n),
            lax.rng_uniform(np.float64(-1.0), np.float64(1.0), (1000,)),
            lax.rng_uniform(np.int8(-128), np.int8(127), (1000,)),
            lax.rng_uniform(np.bool_(False), np.bool_(True), (3,)),
            lax.rng_uniform(np.float32(2.0), np.nextafter(np.float32(2), np.float32(3)), (100,)),
            lax.rng_normal(mu, sigma, n), lax.rng_normal(np.float32(0), np.float32(1), (0,)),
            lax.rng_uniform(np.float16(1.0), np.float16(1.5), (1000,)),
            lax.rng_normal(np.float16(-3.0), np.float16(0.25), (1000,)))


def test_rng_uniform_and_normal():
    args = (np.float32(-2.0), np.float32(3.0), np.int32(-7), np.int32(5), np.uint16(10),
            np.uint16(13), np.float64(1.5), np.float64(0.5))
    compiled = jit(distributions)
    krng.seed(1234)
    f, i, u, d, s8, p, tight, g, empty, h, hn = (np.asarray(v) for v in compiled(*args))
    assert f.dtype == np.float32 and f.shape == (200, 50)
    assert f.min() >= -2.0 and f.max() < 3.0 and abs(f.mean() - 0.5) < 0.1
    assert abs(f.std() - 5 / np.sqrt(12)) < 0.1
    assert i.dtype == np.int32 and set(np.unique(i)) == set(range(-7, 5))
    assert u.dtype == np.uint16 and set(np.unique(u)) == {10, 11, 12}
    assert d.dtype == np.float64 and d.min() >= -1 and d.max() < 1
    assert s8.min() >= -128 and s8.max() < 127 and len(np.unique(s8)) > 200
    assert p.dtype == np.bool_ and not p.any()
    assert (tight == np.float32(2.0)).all()
    assert g.dtype == np.float64 and abs(g.mean() - 1.5) < 0.02 and abs(g.std() - 0.5) < 0.02
    assert empty.shape == (0,)
    assert h.dtype == np.float16 and h.min() >= 1.0 and h.max() < 1.5 and len(np.unique(h)) > 300
    assert hn.dtype == np.float16 and abs(hn.astype(np.float64).mean() + 3.0) < 0.05
    # seeding makes the draws reproducible; successive calls differ
    krng.seed(1234)
    again = [np.asarray(v) for v in compiled(*args)]
    np.testing.assert_array_equal(again[0], f)
    np.testing.assert_array_equal(again[7], g)
    assert not np.array_equal(np.asarray(compiled(*args)[0]), f)
