"""jacfwd/jacrev over pytree arguments and outputs, and holomorphic grad,
against derivatives written out by hand."""
import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import grad, jacfwd, jacrev

X = np.arange(1.0, 4.0, dtype=np.float32)


@pytest.mark.parametrize("jacobian", [jacfwd, jacrev])
def test_jacobians_of_pytrees_nest_output_then_input(jacobian):
    def f(p):
        return {"total": (p["w"] * p["v"]).sum(), "scaled": p["w"] * 2.0}

    got = jacobian(f)({"w": X, "v": X + 1})
    np.testing.assert_allclose(got["total"]["w"], X + 1)
    np.testing.assert_allclose(got["total"]["v"], X)
    np.testing.assert_allclose(got["scaled"]["w"], 2 * np.eye(3))
    np.testing.assert_allclose(got["scaled"]["v"], np.zeros((3, 3)))
    pair = jacobian(lambda a, b: a * b, argnums=(0, 1))(X, X + 1)
    np.testing.assert_allclose(pair[0], np.diag(X + 1))
    np.testing.assert_allclose(pair[1], np.diag(X))


def test_holomorphic_grad():
    z = np.complex64(3 + 4j)
    np.testing.assert_allclose(grad(lax.sin, holomorphic=True)(z), np.cos(3 + 4j), rtol=1e-5)
    assert complex(grad(lambda v: v * v, holomorphic=True)(z)) == pytest.approx(6 + 8j)
    with pytest.raises(TypeError, match="holomorphic=True"):
        grad(lax.sin)(z)
    with pytest.raises(TypeError, match="complex arguments"):
        grad(lax.sin, holomorphic=True)(np.float32(1))
