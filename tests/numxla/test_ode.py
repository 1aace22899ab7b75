"""``numxla.experimental.ode.odeint``: solutions against closed forms and against
what JAX's ``odeint`` returned (recorded offline, x64, default tolerances),
adjoint gradients against closed forms, JAX and finite differences."""
import numpy as np
import pytest

import numxla
import numxla.numpy as jnp
from numxla.experimental.ode import odeint


def decay(y, t, k):
    return -k * y


def lotka_volterra(state, t, a, b, c, d):
    x, y = state["prey"], state["pred"]
    return {"prey": a * x - b * x * y, "pred": -c * y + d * x * y}


def forced_oscillator(y, t, w):
    return jnp.stack([y[1], -w ** 2 * y[0] - 0.1 * y[1] + jnp.sin(t)])


LV_Y0 = {"prey": jnp.array(10.0), "pred": jnp.array(5.0)}
LV_PARAMS = (1.1, 0.4, 0.4, 0.1)
OSC_TIMES = jnp.array([0.5, 1.0, 3.0, 7.0])


def lv_loss(y0, t, *params):
    ys = odeint(lotka_volterra, y0, t, *params)
    return ys["prey"][-1] + 0.5 * ys["pred"].sum()


def test_exponential_decay_and_its_gradients():
    t = jnp.array([0.0, 0.5, 1.0, 2.0])
    ys = odeint(decay, jnp.array([1.0, 3.0]), t, 0.7)
    expected = np.exp(-0.7 * np.asarray(t))[:, None] * [1.0, 3.0]
    np.testing.assert_allclose(ys, expected, rtol=1e-7)

    # y(T) = y0 exp(-k (T - t0)): d/dy0, d/dk, d/dt0, d/dT
    def last(y0, t, k):
        return odeint(decay, y0, t, k)[-1]
    t = jnp.array([0.3, 1.0, 2.0])
    grads = numxla.grad(last, argnums=(0, 1, 2))(1.5, t, 0.7)
    y_end = 1.5 * np.exp(-0.7 * 1.7)
    np.testing.assert_allclose(grads[0], y_end / 1.5, rtol=1e-7)
    np.testing.assert_allclose(grads[1], [0.7 * y_end, 0.0, -0.7 * y_end], rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(grads[2], -1.7 * y_end, rtol=1e-6)


def test_harmonic_oscillator_closing_over_the_frequency():
    t = jnp.linspace(0.0, 6.0, 7)

    def position(w):   # y'' = -w^2 y, y(0) = 1, y'(0) = 0: y = cos(w t)
        def f(y, t):
            return jnp.stack([y[1], -w ** 2 * y[0]])
        return odeint(f, jnp.array([1.0, 0.0]), t)[:, 0]

    np.testing.assert_allclose(position(1.3), np.cos(1.3 * np.asarray(t)), atol=1e-7)
    np.testing.assert_allclose(numxla.jacrev(position)(1.3),
                               -np.asarray(t) * np.sin(1.3 * np.asarray(t)), atol=1e-6)


def test_lotka_volterra_pytree_state_matches_jax():
    ys = odeint(lotka_volterra, LV_Y0, jnp.linspace(0.0, 5.0, 6), *LV_PARAMS)
    np.testing.assert_allclose(ys["prey"], [10.0, 2.8810932492002372, 0.9596036736854197,
                                            0.556697539297843, 0.51943927988697,
                                            0.6826686087843344], rtol=1e-6)
    np.testing.assert_allclose(ys["pred"], [5.0, 6.067427752997989, 4.809397179831935,
                                            3.460203822340172, 2.44324481091864,
                                            1.7361664418852991], rtol=1e-6)


def test_lotka_volterra_gradients_match_jax_and_finite_differences():
    t = jnp.linspace(0.0, 5.0, 6) + 0.3
    g = numxla.grad(lv_loss, argnums=(0, 1, 2, 3, 4, 5))(LV_Y0, t, *LV_PARAMS)
    np.testing.assert_allclose([g[0]["prey"], g[0]["pred"]],
                               [0.22059881701426437, 0.4609249037988878], rtol=1e-5)
    np.testing.assert_allclose(g[1], [2.1026145162725682, -0.33944429364096396,
                                      -0.7311236758674359, -0.5957264167997463,
                                      -0.42519309592517046, -0.011127034039252026], rtol=1e-5)
    np.testing.assert_allclose(g[2:], [5.184579207812439, -23.633988089426058,
                                       -7.795099305260422, 15.23319221553027], rtol=1e-5)
    eps = 1e-5
    params = np.array(LV_PARAMS)
    for i in range(4):
        up, down = params.copy(), params.copy()
        up[i] += eps
        down[i] -= eps
        fd = (lv_loss(LV_Y0, t, *up) - lv_loss(LV_Y0, t, *down)) / (2 * eps)
        assert float(g[2 + i]) == pytest.approx(float(fd), rel=1e-4)


def test_forced_oscillator_matches_jax():
    ys = odeint(forced_oscillator, jnp.array([1.0, 0.0]), OSC_TIMES, 2.0)
    np.testing.assert_allclose(ys, [[1.0, 0.0], [0.6177177429462657, -1.3570312666028996],
                                    [0.377647501493703, 1.0314686270055364],
                                    [0.7304257808854985, -0.44666800202866297]], rtol=1e-6)
    grads = numxla.grad(lambda y0, t, w: jnp.sum(odeint(forced_oscillator, y0, t, w) ** 2),
                        argnums=(0, 1, 2))(jnp.array([1.0, 0.0]), OSC_TIMES, 2.0)
    np.testing.assert_allclose(np.concatenate([np.ravel(g) for g in grads]),
                               [12.306733100674068, -0.9908923410984842, -3.488510237254417,
                                2.377462102326259, -2.258853082932981, 1.3307347014441968,
                                7.169134336392597], rtol=1e-5)


def test_tolerances_and_step_limits():
    exact = odeint(forced_oscillator, jnp.array([1.0, 0.0]), OSC_TIMES, 2.0)
    loose = odeint(forced_oscillator, jnp.array([1.0, 0.0]), OSC_TIMES, 2.0, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(loose, exact, atol=3e-2)
    small_steps = odeint(forced_oscillator, jnp.array([1.0, 0.0]), OSC_TIMES, 2.0, rtol=1e-3,
                         atol=1e-3, hmax=0.01)
    np.testing.assert_allclose(small_steps, exact, atol=1e-6)
    # out of steps, the rest of each interval is one step: close, not accurate
    few = odeint(decay, 1.0, jnp.array([0.0, 1.0]), 1.0, mxstep=3)
    assert abs(float(few[1]) - np.exp(-1.0)) < 1e-2


def test_vmap_and_forward_mode():
    t = jnp.array([0.0, 1.0, 2.0])
    ys = numxla.vmap(lambda y0, k: odeint(decay, y0, t, k))(jnp.array([1.0, 2.0]),
                                                              jnp.array([0.5, 1.5]))
    np.testing.assert_allclose(ys, [[1.0, np.exp(-0.5), np.exp(-1.0)],
                                    [2.0, 2 * np.exp(-1.5), 2 * np.exp(-3.0)]], rtol=1e-7)
    tangent = numxla.jvp(lambda k: odeint(decay, 1.0, t, k)[-1], (0.5,), (1.0,))[1]
    assert float(tangent) == pytest.approx(-2.0 * np.exp(-1.0), rel=1e-6)


def test_under_jit(monkeypatch):
    t = jnp.array([0.0, 1.0])
    solve = numxla.jit(lambda y0, k: odeint(decay, y0, t, k))
    np.testing.assert_allclose(solve(jnp.array([1.0, 2.0]), 0.5),
                               [[1.0, 2.0], [np.exp(-0.5), 2 * np.exp(-0.5)]], rtol=1e-7)
    # the adjoint solve traced under jit, run on tier 0 (its while_loop's kernels
    # are the forward's kind; compiling them again would cost ~15 s of CI)
    monkeypatch.setenv("NUMXLA_TIERED", "reference")
    grad = numxla.jit(numxla.grad(lambda k: odeint(decay, 1.0, t, k)[-1]))
    assert float(grad(0.5)) == pytest.approx(-np.exp(-0.5), rel=1e-6)


def test_jax_spellings():
    assert numxla.experimental.ode.odeint is odeint
    from tests.numxla.programs import as_jax
    with as_jax(numxla):
        import jax.experimental.ode
        assert jax.experimental.ode.odeint is odeint


@pytest.mark.parametrize("call,error,message", [
    (lambda: odeint(3, 1.0, jnp.array([0.0, 1.0])), TypeError, "odeint: func must be callable"),
    (lambda: odeint(decay, 1.0, jnp.array([[0.0, 1.0]]), 1.0), ValueError,
     r"odeint: t must be a non-empty 1-D array of times, got shape \(1, 2\)"),
    (lambda: odeint(decay, 1.0, jnp.zeros((0,)), 1.0), ValueError, "odeint: t must be"),
    (lambda: odeint(decay, 1.0, jnp.array([1.0, 0.0]), 1.0), ValueError,
     "odeint: t must be strictly increasing"),
    (lambda: odeint(decay, 1, jnp.array([0.0, 1.0]), 1.0), TypeError,
     "odeint: y0 must have real floating-point values"),
    (lambda: odeint(decay, 1.0, jnp.array([0.0, 1.0]), "k"), TypeError,
     "odeint: [*]args must be arrays"),
    (lambda: odeint(lambda y, t: (y, y), 1.0, jnp.array([0.0, 1.0])), TypeError,
     "odeint: func must return the structure and shapes of y0"),
    (lambda: odeint(decay, 1.0, jnp.array([0.0, 1.0]), 1.0, mxstep=0), ValueError,
     "odeint: mxstep"),
])
def test_bad_arguments_name_the_parameter(call, error, message):
    with pytest.raises(error, match=message):
        call()
