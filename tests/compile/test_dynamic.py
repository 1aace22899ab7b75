"""Bounded dynamic dimensions compiled (compile/lowering/dynamic.py) against
the eager reference semantics: set_dimension_size, get_dimension_size,
element-wise chains, broadcasts and the shortcut reductions over values cut
to their run-time sizes, with the run-time size taken from data inside the
graph and from a DynamicArray argument; results are DynamicArrays exactly
where the eager interpreter gives them."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.compile import jit
from numxla.tracer.core import dynamic_array

rng = np.random.default_rng(4)


def assert_same_values(got, want):
    for g, w in zip(got, want):
        assert getattr(g, "dynamic_sizes", None) == getattr(w, "dynamic_sizes", None)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def model(x, n, b):
    y = lax.set_dimension_size(x, n, 0)
    two = lax.broadcast_in_dim(np.float32(2), x.shape, ())
    z = lax.add(lax.mul(lax.exp(y), two), lax.broadcast_in_dim(b, x.shape, (1,)))
    return (z, lax.reduce_sum(z, (0,)), lax.get_dimension_size(z, 0),
            lax.reduce_max(y, (0, 1)), lax.reduce_min(z, (1,)), lax.reduce_prod(y, (0,)))


@pytest.mark.parametrize("layout", [None, "{0,1}", "{1,0:T(2,2)}"])
def test_sizes_from_data_inside_the_graph(layout):
    x = -np.abs(rng.standard_normal((5, 3))).astype(np.float32)   # max/prod see the padding
    b = np.arange(3, dtype=np.float32)
    f = jit(model, in_layouts=(layout, None, None))
    for n in (5, 2, 0, 4):
        assert_same_values(f(x, np.int32(n), b), model(x, np.int32(n), b))


def test_out_of_range_sizes_are_clamped_to_the_bound_and_zero():
    x = rng.standard_normal((4, 3)).astype(np.float32)
    f = jit(lambda x, n: lax.get_dimension_size(lax.set_dimension_size(x, n, 0), 0))
    assert int(f(x, np.int32(99))) == 4
    assert int(f(x, np.int32(-7))) == 0


def test_dynamic_array_arguments():
    padded = np.zeros((6, 4), np.float32)
    padded[:3] = rng.standard_normal((3, 4))
    y = dynamic_array(padded, (3, 4))

    def f(y):
        e = lax.exp(y)
        return e, lax.reduce_sum(e, (0,)), lax.reduce_max(lax.neg(e), (0, 1))
    assert_same_values(jit(f)(y), f(y))
    assert jit(f)(y)[0].dynamic_sizes == (3, 4)
