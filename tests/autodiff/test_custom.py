"""custom_vjp, custom_jvp and checkpoint: the user's rules are used, eagerly
and under jit, and checkpointed functions are recomputed in the backward pass."""
import functools

import numpy as np
import pytest

import numxla.primitives as lax
from numxla.autodiff import grad, jvp, value_and_grad
from numxla.autodiff.custom import checkpoint, custom_jvp, custom_vjp
from numxla.compile import jit

X = np.linspace(-2, 2, 5).astype(np.float32)


def _clipped_sin():
    @custom_vjp
    def f(x):
        return lax.sin(x)

    def fwd(x):
        return lax.sin(x), lax.cos(x)

    def bwd(cos_x, g):
        return (lax.clamp(-0.1, g * cos_x, 0.1),)

    f.defvjp(fwd, bwd)
    return f


def test_custom_vjp_rule_replaces_the_derivative():
    f = _clipped_sin()
    expected = np.clip(10 * np.cos(X), -0.1, 0.1)
    for g in (grad(lambda v: (f(v) * 10).sum()), jit(grad(lambda v: (f(v) * 10).sum()))):
        np.testing.assert_allclose(np.asarray(g(X)), expected, rtol=1e-6)
    np.testing.assert_allclose(f(X), np.sin(X), rtol=1e-6)         # the primal is fun's
    # under jvp there is no custom rule: fun's own ops are differentiated
    _, tangent = jvp(f, (X,), (np.ones(5, np.float32),))
    np.testing.assert_allclose(tangent, np.cos(X), rtol=1e-6)


def test_custom_vjp_with_nondiff_args_and_pytrees():
    @functools.partial(custom_vjp, nondiff_argnums=(0,))
    def scale(k, d):
        return {"y": d["a"] * k}

    scale.defvjp(lambda k, d: (scale(k, d), None),
                 lambda k, _, ct: ({"a": ct["y"] * (k + 1.0)},))  # deliberately not k
    g = grad(lambda a: scale(2.0, {"a": a})["y"].sum())(X)
    np.testing.assert_allclose(g, np.full(5, 3.0))


def test_custom_jvp_rule_in_forward_and_reverse_mode():
    @custom_jvp
    def softplus(x):
        return lax.log1p(lax.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * lax.logistic(x) * 2.0  # x2: proves the rule is used

    y = np.array([-3.0, 0.0, 4.0], np.float32)
    expected = 2 / (1 + np.exp(-y))
    _, tangent = jvp(softplus, (y,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)
    for g in (grad(lambda v: softplus(v).sum()), jit(grad(lambda v: softplus(v).sum()))):
        np.testing.assert_allclose(np.asarray(g(y)), expected, rtol=1e-6)


def test_checkpoint_recomputes_in_the_backward_pass():
    def block(w, v):
        return lax.tanh(v @ w)

    w = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
    v = np.ones((2, 3), np.float32)

    def plain(w, v):
        return block(w, block(w, v)).sum()

    def remat(w, v):
        return checkpoint(block)(w, checkpoint(block)(w, v)).sum()

    value, g = value_and_grad(remat)(w, v)
    np.testing.assert_allclose(g, grad(plain)(w, v), rtol=1e-6)
    assert value == pytest.approx(float(plain(w, v)), rel=1e-6)
    text, plain_text = (jit(grad(f)).lower(w, v).as_text() for f in (remat, plain))
    assert text.count("tanh(") > plain_text.count("tanh(")   # the recomputation
    np.testing.assert_allclose(np.asarray(jit(grad(remat))(w, v)), grad(plain)(w, v), rtol=1e-5)


def test_rules_hold_under_a_vmap_inside_grad():
    """``grad(vmap(f))``: the vmap is the inner transform, and the rule must
    still replace the derivative (a per-example loss, batched, then summed)."""
    from numxla.autodiff import vmap
    f = _clipped_sin()
    w = np.float32(3.0)
    xs = X.reshape(5, 1) * np.ones((5, 2), np.float32)

    def per_example(w, x):                       # w shared, x batched
        return (f(w * x) * 10).sum()

    got = grad(lambda w: vmap(per_example, (None, 0))(w, xs).sum())(w)
    want = np.sum(np.clip(10 * np.cos(w * xs), -0.1, 0.1) * xs)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    # a while_loop has no reverse mode: only the rule makes this differentiable
    newton = custom_vjp(lambda a: lax.while_loop(
        lambda c: c[1] < 30, lambda c: (0.5 * (c[0] + a / c[0]), c[1] + 1), (a, 0))[0])
    newton.defvjp(lambda a: (lax.sqrt(a), lax.sqrt(a)), lambda r, g: (g / (2 * r),))
    a = np.array([4.0, 9.0, 2.0], np.float32)
    for g in (grad(lambda a: vmap(newton)(a).sum()), jit(grad(lambda a: vmap(newton)(a).sum()))):
        np.testing.assert_allclose(g(a), 0.5 / np.sqrt(a), rtol=1e-6)
    # custom_jvp: relu's derivative at 0 is its rule's 0 (plain max would split it)
    relu = custom_jvp(lambda x: lax.max(x, np.float32(0)))
    relu.defjvp(lambda p, t: (relu(p[0]), lax.select(p[0] > 0, t[0], t[0] * 0)))
    zeros = np.zeros(3, np.float32)
    np.testing.assert_array_equal(grad(lambda x: vmap(relu)(x).sum())(zeros), zeros)
    np.testing.assert_array_equal(jvp(vmap(relu), (zeros,), (np.ones(3, np.float32),))[1], zeros)
    # checkpoint: still recomputed, still right
    h = checkpoint(lambda x: lax.sin(x) * x)
    np.testing.assert_allclose(grad(lambda x: vmap(h)(x).sum())(X),
                               np.cos(X) * X + np.sin(X), rtol=1e-6)
