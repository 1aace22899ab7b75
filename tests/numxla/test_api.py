"""``import numxla as jax``: the top-level API under JAX's names."""
import functools

import numpy as np
import pytest

import numxla as jax
import numxla.numpy as jnp
from numxla import lax


def test_transforms_and_arrays_under_jax_names():
    x = jnp.arange(4.0)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda v: jnp.sin(v) * 2)(x)),
                               np.sin(np.arange(4.0)) * 2, rtol=1e-6)
    np.testing.assert_allclose(jax.grad(lambda v: (v ** 2).sum())(np.float32([1, 2])), [2, 4])
    np.testing.assert_allclose(jax.hessian(lambda v: (v ** 3).sum())(np.float32([1, 2])),
                               [[6, 0], [0, 12]])
    out, f_jvp = jax.linearize(jnp.sin, np.float32(0.5))
    assert float(f_jvp(np.float32(2.0))) == pytest.approx(2 * np.cos(0.5), rel=1e-6)
    assert float(jax.grad(lambda v: lax.stop_gradient(v) * v)(3.0)) == 3.0
    shape = jax.eval_shape(lambda v: {"y": v[:2] @ np.ones((2, 3), np.float32)},
                           x.astype(np.float32))  # (x is f64: the suite runs with x64)
    assert shape["y"].shape == (3,) and shape["y"].dtype == np.float32
    assert "sin(" in str(jax.make_jaxpr(jnp.sin)(x))
    assert jax.numpy is jnp and jax.device_count() >= 1 and jax.process_index() == 0
    import numxla.numpy.fft as nfft
    import numxla.numpy.linalg as la
    assert float(la.det(np.eye(2, dtype=np.float32) * 2)) == pytest.approx(4.0)
    assert nfft is jnp.fft
    np.testing.assert_array_equal(jax.device_get({"a": jax.device_put(x)})["a"], x)


def test_tree_util_and_partial():
    tree = {"a": 1, "b": (2, 3)}
    assert jax.tree_util.tree_map(lambda a: a * 2, tree) == {"a": 2, "b": (4, 6)}
    assert jax.tree.leaves(tree) == [1, 2, 3]
    assert jax.tree_util.tree_reduce(lambda a, b: a + b, tree) == 6
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    assert jax.tree_util.tree_unflatten(treedef, leaves) == tree
    add = jax.tree_util.Partial(lambda a, b: a + b, np.float32(1))
    assert float(jax.jit(lambda p, v: p(v))(add, np.float32(2))) == 3.0

    @jax.tree_util.register_pytree_node_class
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def tree_flatten(self):
            return (self.a, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)

    doubled = jax.jit(lambda p: Pair(p.a * 2, p.b))(Pair(np.float32(1), np.float32(5)))
    assert float(doubled.a) == 2 and float(doubled.b) == 5


def test_debug_print_and_callback_eagerly_and_compiled(capsys):
    seen = []

    def f(v):
        jax.debug.print("sum {s} first {f}", s=v.sum(), f=v[0])
        jax.debug.callback(lambda a: seen.append(float(a)), v[1])
        return v * 2

    x = np.arange(3.0, dtype=np.float32)
    f(x)
    jax.jit(f)(x)
    assert capsys.readouterr().out.splitlines() == ["sum 3.0 first 0.0"] * 2
    assert seen == [1.0, 1.0]


def test_custom_rules_under_jax_names():
    @functools.partial(jax.custom_vjp, nondiff_argnums=())
    def f(v):
        return v * 3.0

    f.defvjp(lambda v: (f(v), None), lambda _, g: (g * 0.5,))
    assert float(jax.grad(f)(np.float32(1))) == 0.5
    assert float(jax.grad(jax.checkpoint(lambda v: jnp.sin(v) ** 2))(np.float32(0.3))) == \
        pytest.approx(np.sin(0.6), rel=1e-5)


def test_at_updates_on_eager_and_compiled_results():
    z = jnp.zeros(3)
    assert repr(z).startswith("Array(")
    np.testing.assert_array_equal(z.at[0].set(1.0), [1, 0, 0])
    doubled = jax.jit(lambda v: v * 2)(np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(doubled.at[1].add(5.0)), [2, 7, 2])
    assert float(doubled.at[2].get()) == 2.0
    summed = lax.add(np.ones(2, np.float32), 1.0)
    np.testing.assert_array_equal(np.asarray(summed.at[1].mul(3.0)), [2, 6])
    np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v + 1)(summed)), [3, 3])
