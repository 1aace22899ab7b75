"""``stop_gradient``: the identity whose derivative is zero, in every transform."""
import numpy as np

import numxla.primitives as lax
from numxla.autodiff import grad, jvp, vmap
from numxla.compile import jit


def test_stop_gradient_blocks_derivatives_everywhere():
    def f(x):
        return (lax.stop_gradient(x) * x).sum()  # d/dx = stop_gradient(x), not 2x

    x = np.arange(4.0, dtype=np.float32)
    for g in (grad(f), jit(grad(f)), grad(jit(f))):
        np.testing.assert_array_equal(np.asarray(g(x)), x)
    primal, tangent = jvp(lambda v: lax.stop_gradient(v) * v, (x,), (np.ones(4, np.float32),))
    np.testing.assert_array_equal(tangent, x)
    np.testing.assert_array_equal(primal, x * x)
    batched = vmap(lambda v: lax.stop_gradient({"a": v})["a"] * 2)(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(batched, np.full((2, 3), 2.0))
    assert "stop_gradient" in jit(f).lower(x).as_text()
