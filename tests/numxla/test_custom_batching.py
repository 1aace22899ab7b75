"""``jax.custom_batching``: ``custom_vmap`` (the user's rule under ``vmap``,
the function elsewhere, derivatives of both) and ``sequential_vmap``.
Expected values are JAX 0.10.2's where JAX defines them."""
import numpy as np
import pytest

import numxla as jax
import numxla.numpy as jnp
from numxla.custom_batching import custom_vmap, sequential_vmap


@pytest.fixture(autouse=True)
def reference_tier(monkeypatch):
    monkeypatch.setenv("NUMXLA_TIERED", "reference")  # jit traces, runs on tier 0


def _sin_with_cos_rule(calls):
    """``sin``, whose vmap rule (deliberately different) computes ``cos``:
    which one ran shows in the values."""
    @custom_vmap
    def f(x):
        return jnp.sin(x)

    @f.def_vmap
    def rule(axis_size, in_batched, x):
        calls.append((axis_size, in_batched))
        return jnp.cos(x), in_batched[0]
    return f


X = np.array([0.0, 1.0, 2.0], np.float32)


def test_custom_vmap_uses_the_rule_only_under_vmap():
    calls = []
    f = _sin_with_cos_rule(calls)
    np.testing.assert_allclose(f(1.0), np.sin(1.0), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f)(X), np.cos(X), rtol=1e-6)
    assert calls == [(3, [True])]
    np.testing.assert_allclose(jax.jit(jax.vmap(f))(X), np.cos(X), rtol=1e-6)
    # vmap of vmap: the rule batches the inner axis, the outer one batches its ops
    np.testing.assert_allclose(jax.vmap(jax.vmap(f))(np.ones((2, 3), np.float32)),
                               np.full((2, 3), np.cos(1.0)), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(f, in_axes=1)(np.ones((2, 3), np.float32)),
                               np.full((3, 2), np.cos(1.0)), rtol=1e-6)


def test_custom_vmap_derivatives():
    f = _sin_with_cos_rule([])
    # outside vmap the function is differentiated (JAX: jvp only)
    np.testing.assert_allclose(jax.grad(f)(1.0), np.cos(1.0), rtol=1e-6)
    _, t = jax.jvp(f, (1.0,), (1.0,))
    np.testing.assert_allclose(t, np.cos(1.0), rtol=1e-6)
    # under vmap, the derivative of the rule (JAX's jvp-of-vmap gives -sin here)
    np.testing.assert_allclose(jax.grad(lambda x: jax.vmap(f)(x).sum())(X), -np.sin(X),
                               rtol=1e-6)
    out, t = jax.vmap(lambda x: jax.jvp(f, (x,), (jnp.ones_like(x),)))(X)
    np.testing.assert_allclose(out, np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(t, -np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(jax.grad(f))(X), -np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.vmap(jax.grad(f)))(X), -np.sin(X), rtol=1e-6)


def test_custom_vmap_pytrees_unbatched_arguments_and_outputs():
    seen = []

    @custom_vmap
    def f(d, scale):
        return {"a": d["x"] * scale, "b": d["y"]}

    @f.def_vmap
    def rule(axis_size, in_batched, d, scale):
        seen.append(in_batched)
        return {"a": d["x"] * scale, "b": d["y"]}, {"a": True, "b": in_batched[0]["y"]}

    out = jax.vmap(f, in_axes=({"x": 0, "y": None}, None))({"x": X, "y": 5.0}, 2.0)
    assert seen == [[{"x": True, "y": False}, False]]
    np.testing.assert_allclose(out["a"], 2 * X)
    np.testing.assert_allclose(out["b"], [5.0, 5.0, 5.0])

    @custom_vmap
    def total(x):
        return x.sum()

    total.def_vmap(lambda n, in_batched, x: (x.sum(), False))   # one value for all examples
    np.testing.assert_allclose(jax.vmap(total)(np.ones((3, 2), np.float32)), [6.0, 6.0, 6.0])
    # a keyword argument is bound to its position
    np.testing.assert_allclose(f({"x": X, "y": 1.0}, scale=3.0)["a"], 3 * X)


def test_custom_vmap_errors():
    @custom_vmap
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No batching rule"):
        jax.vmap(f)(X)
    f.def_vmap(lambda n, in_batched, x: (x.sum(), True))
    with pytest.raises(ValueError, match="batched"):
        jax.vmap(f)(X)
    f.def_vmap(lambda n, in_batched, x: (x, [True, False]))
    with pytest.raises(ValueError, match="out_batched"):
        jax.vmap(f)(X)


def test_sequential_vmap_runs_one_example_at_a_time():
    shapes = []

    @sequential_vmap
    def f(x, y):
        shapes.append(jnp.shape(x))
        return {"sum": x.sum() + y, "x": x}

    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    out = jax.vmap(f, in_axes=(0, None))(xs, 1.0)
    assert all(s == (2,) for s in shapes)
    np.testing.assert_allclose(out["sum"], xs.sum(1) + 1)
    np.testing.assert_allclose(out["x"], xs)
    np.testing.assert_allclose(jax.jit(jax.vmap(f))(xs, np.ones(3, np.float32))["sum"],
                               xs.sum(1) + 1)
    g = jax.grad(lambda xs: jax.vmap(f, in_axes=(0, None))(xs, 1.0)["sum"].sum())(xs)
    np.testing.assert_allclose(g, np.ones_like(xs))
    np.testing.assert_allclose(f(xs[0], 1.0)["sum"], 2.0)
    assert jax.custom_batching.sequential_vmap is sequential_vmap
