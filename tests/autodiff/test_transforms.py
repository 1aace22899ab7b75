"""The transforms themselves: pytrees, argnums, has_aux, symbolic zeros,
integer inputs, composition with each other and with jit, and errors.
Values are checked against closed-form derivatives computed with NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import numxla.primitives as lax
import numxla.primitives.numpy as xnp
from numxla.autodiff import check_grads, float0, grad, jacfwd, jacrev, jvp, value_and_grad, vjp, vmap
from numxla.compile import jit
from numxla.tracer import make_graph

X = np.array([0.3, -1.2, 2.0])


def f_sin_x(x):
    return xnp.sum(lax.sin(x) * x)


def df_sin_x(x):
    return np.cos(x) * x + np.sin(x)


def test_grad_matches_closed_form():
    np.testing.assert_allclose(grad(f_sin_x)(X), df_sin_x(X), rtol=1e-12)


def test_value_and_grad_over_pytrees_and_argnums():
    def loss(params, x, scale):
        return scale * xnp.sum(lax.tanh(x * params["w"]) + params["b"][0] ** 2)

    params = {"w": np.array([0.5, -0.25, 1.0]), "b": (np.array(3.0),)}
    value, (g_params, g_scale) = value_and_grad(loss, argnums=(0, 2))(params, X, 2.0)
    t = np.tanh(X * params["w"])
    assert value == pytest.approx(2.0 * (t.sum() + 3 * 9.0))
    np.testing.assert_allclose(g_params["w"], 2.0 * (1 - t ** 2) * X, rtol=1e-12)
    np.testing.assert_allclose(g_params["b"][0], 2.0 * 3 * 2 * 3.0, rtol=1e-12)
    assert float(g_scale) == pytest.approx(t.sum() + 27.0, rel=1e-6)


def test_has_aux_returns_undifferentiated_aux():
    def loss(x):
        y = lax.exp(x)
        return xnp.sum(y), {"y": y}

    (value, aux), g = value_and_grad(loss, has_aux=True)(X)
    np.testing.assert_allclose(g, np.exp(X))
    np.testing.assert_allclose(aux["y"], np.exp(X))
    assert isinstance(aux["y"], np.ndarray)        # a plain value, not a tracer
    g2, aux2 = grad(loss, has_aux=True)(X)
    np.testing.assert_allclose(g2, np.exp(X))
    out, vjp_fn, aux3 = vjp(loss, X, has_aux=True)
    np.testing.assert_allclose(vjp_fn(np.float64(2.0))[0], 2 * np.exp(X))


def test_integer_inputs_get_float0_cotangents():
    def f(x, n):
        return xnp.sum(x * lax.convert_element_type(n, np.float64))

    gx, gn = grad(f, argnums=(0, 1), allow_int=True)(X, np.array([1, 2, 3], np.int32))
    np.testing.assert_allclose(gx, [1.0, 2.0, 3.0])
    assert gn.dtype == float0 and gn.shape == (3,)
    _, t = jvp(lambda n: n * 2, (np.array([1, 2], np.int32),), (np.zeros(2, float0),))
    assert t.dtype == float0


def test_jit_of_grad_hands_back_float0_results():
    def f(x, n):
        return xnp.sum(x * lax.convert_element_type(n, np.float64))

    gx, gn = jit(grad(f, argnums=(0, 1), allow_int=True))(X, np.array([1, 2, 3], np.int32))
    np.testing.assert_allclose(np.asarray(gx), [1.0, 2.0, 3.0])
    assert gn.dtype == float0 and gn.shape == (3,)


def test_unused_inputs_get_zero_gradients():
    g = grad(lambda x, y: xnp.sum(x * 2.0), argnums=(0, 1))(X, np.ones(4))
    np.testing.assert_allclose(g[0], 2.0)
    np.testing.assert_array_equal(g[1], np.zeros(4))


def test_jvp_and_vjp_agree_with_jacobians():
    def f(x):
        return lax.sin(x) * lax.exp(x[::-1] if False else x)

    jf, jr = jacfwd(f)(X), jacrev(f)(X)
    expected = np.diag(np.cos(X) * np.exp(X) + np.sin(X) * np.exp(X))
    np.testing.assert_allclose(jf, expected, rtol=1e-12)
    np.testing.assert_allclose(jr, expected, rtol=1e-12)
    out, t = jvp(f, (X,), (np.ones(3),))
    np.testing.assert_allclose(t, expected.sum(1), rtol=1e-12)


def test_second_and_third_derivatives():
    f = lambda x: lax.sin(x) * x                     # noqa: E731
    x = 0.7
    assert float(grad(grad(f))(x)) == pytest.approx(2 * np.cos(x) - x * np.sin(x), rel=1e-5)
    d3 = grad(grad(grad(f)))(np.float64(x))
    assert float(d3) == pytest.approx(-3 * np.sin(x) - x * np.cos(x), rel=1e-10)
    # forward over reverse, reverse over forward
    fwd_rev = jvp(grad(f), (np.float64(x),), (np.float64(1.0),))[1]
    rev_fwd = grad(lambda x: jvp(f, (x,), (np.float64(1.0),))[1])(np.float64(x))
    assert float(fwd_rev) == pytest.approx(2 * np.cos(x) - x * np.sin(x), rel=1e-10)
    assert float(rev_fwd) == pytest.approx(2 * np.cos(x) - x * np.sin(x), rel=1e-10)


def test_vmap_of_grad_and_in_out_axes():
    xs = np.stack([X, X + 1.0, X - 2.0])
    np.testing.assert_allclose(vmap(grad(f_sin_x))(xs), df_sin_x(xs), rtol=1e-12)
    out = vmap(lambda a, b: a * b, in_axes=(1, None), out_axes=1)(xs.T, X)
    np.testing.assert_allclose(out, (xs * X).T)
    dict_out = vmap(lambda d: {"s": d["a"] + d["b"]}, in_axes=({"a": 0, "b": None},))(
        {"a": xs, "b": X})
    np.testing.assert_allclose(dict_out["s"], xs + X)


def test_grad_under_python_control_flow_on_concrete_values():
    def f(x):
        return lax.sin(x) if x > 0 else lax.cos(x)

    assert float(grad(f)(0.5)) == pytest.approx(np.cos(0.5), rel=1e-6)
    assert float(grad(f)(-0.5)) == pytest.approx(np.sin(0.5), rel=1e-6)


def test_jit_and_grad_compose_in_both_orders():
    g1 = jit(grad(f_sin_x))(X)
    g2 = grad(jit(f_sin_x))(X)
    np.testing.assert_allclose(np.asarray(g1), df_sin_x(X), rtol=1e-12)
    np.testing.assert_allclose(g2, df_sin_x(X), rtol=1e-12)
    text = jit(grad(f_sin_x)).lower(X).as_text()
    assert "cos" in text and "sin" in text


def test_grad_of_graph_is_one_graph():
    text = make_graph(grad(f_sin_x))(X).as_text()
    assert "reduce_sum" in text and "broadcast_in_dim" in text


def test_check_grads_catches_a_wrong_rule():
    from numxla.autodiff import rules
    from numxla.primitives import elementwise as ew
    saved = rules.vjp_rules[ew.sin_p]
    rules.vjp_rules[ew.sin_p] = lambda ct, fwd, x: (lax.mul(ct, lax.sin(x)),)
    try:
        check_grads(lambda x: lax.sin(x), (X,), order=1, modes=("fwd",))
        with pytest.raises(AssertionError, match="rev"):
            check_grads(lambda x: lax.sin(x), (X,), order=1, modes=("rev",))
    finally:
        rules.vjp_rules[ew.sin_p] = saved


def test_errors_are_clear():
    with pytest.raises(TypeError, match="real scalar"):
        grad(lambda x: x * 2.0)(X)
    with pytest.raises(TypeError, match="tangent of shape"):
        jvp(lambda x: x, (X,), (np.ones(2),))
    with pytest.raises(ValueError, match="different sizes"):
        vmap(lambda a, b: a + b)(np.ones((2, 3)), np.ones((4, 3)))
    _, vjp_fn = vjp(lambda x: (x, x), X)
    with pytest.raises(TypeError, match="structure"):
        vjp_fn(X)
    with pytest.raises(ValueError, match="out of range"):
        grad(f_sin_x, argnums=3)(X)


def test_compiled_cnn_training_step_matches_eager_and_learns():
    """The README's model: jit(value_and_grad(loss)) agrees with the eager
    transform, its graph holds XLA's VJP ops, and SGD lowers the loss."""
    import demo
    images, labels = demo.make_shapes(16, seed=3)
    params = demo.init_cnn(seed=1)
    step = jit(value_and_grad(demo.cross_entropy))
    loss, grads = step(params, images, labels)
    eager_loss, eager_grads = value_and_grad(demo.cross_entropy)(params, images, labels)
    assert float(loss) == pytest.approx(float(eager_loss), rel=1e-5)
    for name in params:
        np.testing.assert_allclose(np.asarray(grads[name]), eager_grads[name], rtol=2e-4,
                                   atol=2e-6, err_msg=name)
    text = step.lower(params, images, labels).as_text()
    assert "batch_norm_grad(" in text and "select_and_scatter_add(" in text
    for _ in range(15):
        params = demo.sgd(params, step(params, images, labels)[1], 0.1)
    assert float(step(params, images, labels)[0]) < 0.5 * float(loss)


def test_jacobians_over_pytrees_and_argnums():
    x, y = np.array([0.5, 1.0]), np.array([2.0, 3.0, 4.0])

    def f(x, y):
        return {"a": lax.sin(x) * xnp.sum(x), "b": x[:, None] * y[None, :]}

    jf = jacfwd(f, argnums=(0, 1))(x, y)
    jr = jacrev(f, argnums=(0, 1))(x, y)
    expected_a_x = np.diag(np.cos(x) * x.sum()) + np.sin(x)[:, None]
    expected_b_y = np.einsum("i,jk->ijk", x, np.eye(3))
    for jac in (jf, jr):
        np.testing.assert_allclose(jac["a"][0], expected_a_x, rtol=1e-12)
        np.testing.assert_allclose(jac["a"][1], np.zeros((2, 3)))
        np.testing.assert_allclose(jac["b"][1], expected_b_y, rtol=1e-12)
        assert jac["b"][0].shape == (2, 3, 2)
