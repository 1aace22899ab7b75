"""jax.experimental.ode.odeint as JAX's ODE examples use it: a pendulum and
Lotka-Volterra system with extra args, solutions at many times, under jit
and vmap over initial conditions, a pytree state, gradients with respect to
the initial state, the times and the args (the adjoint method), and a small
neural ODE fitted to a trajectory by gradient descent through the solver."""


def main(jax):
    import jax.numpy as jnp
    from jax import grad, jit, random, vmap
    from jax.experimental.ode import odeint

    out = {}

    def pend(y, t, b, c):
        theta, omega = y
        return jnp.array([omega, -b * omega - c * jnp.sin(theta)])

    y0 = jnp.array([jnp.pi - 0.1, 0.0])
    t = jnp.linspace(0.0, 10.0, 11)
    sol = odeint(pend, y0, t, 0.25, 5.0)
    out["pendulum"] = sol
    out["pendulum_jit"] = jit(odeint, static_argnums=0)(pend, y0, t, 0.25, 5.0)[-1]

    def lotka_volterra(state, t, params):
        x, y = state["prey"], state["predator"]
        alpha, beta, delta, gamma = params
        return {"prey": alpha * x - beta * x * y, "predator": delta * x * y - gamma * y}

    state0 = {"prey": jnp.array(10.0), "predator": jnp.array(5.0)}
    lv_params = jnp.array([1.1, 0.4, 0.1, 0.4])
    ts = jnp.linspace(0.0, 5.0, 6)
    lv = odeint(lotka_volterra, state0, ts, lv_params, rtol=1e-6, atol=1e-6)
    out["lotka_volterra"] = lv

    # vmap over initial conditions, under jit
    @jit
    def final_angle(theta0):
        return odeint(pend, jnp.array([theta0, 0.0]), jnp.array([0.0, 2.0]), 0.25, 5.0)[-1, 0]
    out["vmap_initial"] = vmap(final_angle)(jnp.array([0.1, 0.5, 1.0]))

    # gradients: w.r.t. the initial state, the args and the output times
    def loss(y0, b, c):
        ys = odeint(pend, y0, jnp.array([0.0, 1.0, 2.0]), b, c)
        return jnp.sum(ys[-1] ** 2)
    out["grad_y0_args"] = grad(loss, argnums=(0, 1, 2))(jnp.array([1.0, 0.0]), 0.25, 5.0)
    out["grad_times"] = grad(lambda ts: jnp.sum(odeint(pend, y0, ts, 0.25, 5.0)[:, 0]))(
        jnp.array([0.0, 0.5, 1.0]))
    out["grad_decay"] = grad(lambda k: odeint(lambda y, t, k: -k * y, 1.0,
                                              jnp.array([0.0, 2.0]), k)[-1])(0.5)

    # a neural ODE fitted to a spiral's trajectory
    true_A = jnp.array([[-0.1, 2.0], [-2.0, -0.1]])

    def true_dynamics(y, t):
        return jnp.dot(y ** 3, true_A)

    t_data = jnp.linspace(0.0, 1.0, 8)
    y_data = odeint(true_dynamics, jnp.array([2.0, 0.0]), t_data)

    def init_mlp(key, sizes):
        keys = random.split(key, len(sizes) - 1)
        return [(0.3 * random.normal(k, (m, n)), jnp.zeros(n))
                for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

    def mlp_dynamics(y, t, params):
        h = y ** 3
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return h @ w + b

    @jit
    def fit_loss(params):
        pred = odeint(mlp_dynamics, y_data[0], t_data, params, rtol=1e-5, atol=1e-5)
        return jnp.mean(jnp.abs(pred - y_data))

    params = init_mlp(random.PRNGKey(0), [2, 16, 2])
    value_and_grad = jit(jax.value_and_grad(fit_loss))
    losses = []
    for _ in range(6):
        value, g = value_and_grad(params)
        params = jax.tree_util.tree_map(lambda p, g: p - 0.05 * g, params, g)
        losses.append(value)
    out["fit_losses"] = jnp.stack(losses)
    out["y_data"] = y_data
    return out
